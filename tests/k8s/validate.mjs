// Validates the manifests `moat export --format k8s` writes against the
// Kubernetes API's OpenAPI schemas (kubernetes-models) and Cilium's CRD
// schema (@kubernetes-models/cilium), offline.  Usage:
//   node validate.mjs FILE.yaml...
// Prints one TAP-style line a document ("valid KIND NAME" or "invalid ...:
// why") and a JSON line of each document as this YAML 1.2 reader read it
// ("json FILE INDEX {...}"), for the caller to compare with a YAML 1.1
// reader's.  Exit 1 when any document is invalid or unknown.
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import { Pod } from "kubernetes-models/v1/Pod";
import { Job } from "kubernetes-models/batch/v1/Job";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";
import { CiliumNetworkPolicy } from "@kubernetes-models/cilium/cilium.io/v2/CiliumNetworkPolicy";

const models = {
  "v1/Pod": Pod,
  "batch/v1/Job": Job,
  "apps/v1/Deployment": Deployment,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy,
  "cilium.io/v2/CiliumNetworkPolicy": CiliumNetworkPolicy,
};

let bad = 0;
for (const file of process.argv.slice(2)) {
  const docs = parseAllDocuments(readFileSync(file, "utf8"), { version: "1.2", strict: true, uniqueKeys: true });
  docs.forEach((doc, i) => {
    const problems = [...doc.errors, ...doc.warnings].map((e) => e.message);
    const obj = doc.toJS();
    const key = `${obj?.apiVersion}/${obj?.kind}`;
    const Model = models[key];
    if (problems.length || !Model) {
      console.log(`invalid ${file}#${i}: ${problems.join("; ") || `no schema for ${key}`}`);
      bad++;
      return;
    }
    try {
      new Model(obj).validate();
      console.log(`valid ${obj.kind} ${obj.metadata.name}`);
    } catch (e) {
      console.log(`invalid ${obj.kind} ${obj.metadata?.name}: ${e.message.replace(/\n/g, " ")}`);
      bad++;
    }
    console.log(`json ${file} ${i} ${JSON.stringify(obj)}`);
  });
}
process.exit(bad ? 1 : 0);
