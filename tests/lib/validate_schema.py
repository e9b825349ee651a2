#!/usr/bin/python3
"""A small JSON Schema validator, standard library only.

Enough of draft 2020-12 (and draft-07) for docs/report.schema.json, so the
tests need no python3-jsonschema:

  type, enum, const, required, properties, patternProperties,
  additionalProperties, propertyNames, minProperties, maxProperties, items
  (a schema), prefixItems, minItems, maxItems, uniqueItems, pattern,
  minLength, maxLength, minimum, maximum, exclusiveMinimum,
  exclusiveMaximum, multipleOf, allOf, anyOf, oneOf, not, if/then/else, and
  $ref to "#" or "#/<json pointer>" within the same document; boolean
  schemas.  Annotation keywords ($schema, $id, $comment, $defs,
  definitions, title, description, default, examples) are accepted and
  ignored.  Any other keyword is an error in the schema, so a schema can
  never lean on a check this validator would silently skip.

Usage: validate_schema.py SCHEMA.json FILE.json...
Prints one line per error ("FILE: /json/pointer: message") and exits 1 when
any file is invalid (2 for an unreadable file or a bad schema).
"""

import json
import math
import re
import sys

ANNOTATIONS = {
    "$schema", "$id", "$comment", "$defs", "definitions", "title",
    "description", "default", "examples", "deprecated", "readOnly",
    "writeOnly",
}
KNOWN = ANNOTATIONS | {
    "type", "enum", "const", "required", "properties", "patternProperties",
    "additionalProperties", "propertyNames", "minProperties", "maxProperties",
    "items", "prefixItems", "minItems", "maxItems", "uniqueItems", "pattern",
    "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "multipleOf", "allOf", "anyOf", "oneOf", "not", "if",
    "then", "else", "$ref",
}


class SchemaError(Exception):
    """The schema itself is wrong or uses a keyword this validator lacks."""


def _type_ok(value, name):
    if name == "null":
        return value is None
    if name == "boolean":
        return isinstance(value, bool)
    if name == "integer":
        if isinstance(value, bool):
            return False
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if name == "string":
        return isinstance(value, str)
    if name == "array":
        return isinstance(value, list)
    if name == "object":
        return isinstance(value, dict)
    raise SchemaError("unknown type %r" % name)


def _equal(a, b):
    """JSON equality: 1 == 1.0, but true != 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _pointer_escape(key):
    return str(key).replace("~", "~0").replace("/", "~1")


class Validator:
    def __init__(self, schema):
        self.root = schema
        self._check_schema(schema, "#")

    # -- the schema itself -------------------------------------------------
    def _check_schema(self, s, where):
        if isinstance(s, bool):
            return
        if not isinstance(s, dict):
            raise SchemaError("%s: a schema must be an object or a boolean" % where)
        for k in s:
            if k not in KNOWN:
                raise SchemaError("%s: keyword %r is not supported by this validator" % (where, k))
        for k in ("properties", "patternProperties", "$defs", "definitions"):
            for name, sub in s.get(k, {}).items():
                self._check_schema(sub, "%s/%s/%s" % (where, k, name))
        for k in ("additionalProperties", "propertyNames", "items", "not", "if", "then", "else"):
            if k in s:
                self._check_schema(s[k], "%s/%s" % (where, k))
        for k in ("allOf", "anyOf", "oneOf", "prefixItems"):
            for i, sub in enumerate(s.get(k, [])):
                self._check_schema(sub, "%s/%s/%d" % (where, k, i))
        if "$ref" in s:
            self._resolve(s["$ref"])
        for k in ("pattern",):
            if k in s:
                re.compile(s[k])
        for name in s.get("patternProperties", {}):
            re.compile(name)

    def _resolve(self, ref):
        if ref == "#":
            return self.root
        if not ref.startswith("#/"):
            raise SchemaError("$ref %r: only references within the document are supported" % ref)
        node = self.root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, list):
                node = node[int(part)]
            elif isinstance(node, dict) and part in node:
                node = node[part]
            else:
                raise SchemaError("$ref %r does not resolve" % ref)
        return node

    # -- instances ---------------------------------------------------------
    def errors(self, value, schema=None, path=""):
        """All the errors of value against schema, as (pointer, message)."""
        if schema is None:
            schema = self.root
        if schema is True:
            return []
        if schema is False:
            return [(path or "/", "no value is allowed here")]
        out = []
        e = out.append

        if "$ref" in schema:
            out += self.errors(value, self._resolve(schema["$ref"]), path)

        if "type" in schema:
            types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if not any(_type_ok(value, t) for t in types):
                e((path or "/", "expected %s, got %s" % (" or ".join(types), json.dumps(value)[:80])))
                return out  # the other checks would only repeat it
        if "enum" in schema and not any(_equal(value, x) for x in schema["enum"]):
            e((path or "/", "%s is not one of %s" % (json.dumps(value)[:80], json.dumps(schema["enum"]))))
        if "const" in schema and not _equal(value, schema["const"]):
            e((path or "/", "expected %s, got %s" % (json.dumps(schema["const"]), json.dumps(value)[:80])))

        if isinstance(value, dict):
            out += self._object(value, schema, path)
        if isinstance(value, list):
            out += self._array(value, schema, path)
        if isinstance(value, str):
            if "pattern" in schema and not re.search(schema["pattern"], value):
                e((path or "/", "%s does not match /%s/" % (json.dumps(value)[:80], schema["pattern"])))
            if "minLength" in schema and len(value) < schema["minLength"]:
                e((path or "/", "shorter than %d characters" % schema["minLength"]))
            if "maxLength" in schema and len(value) > schema["maxLength"]:
                e((path or "/", "longer than %d characters" % schema["maxLength"]))
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if "minimum" in schema and value < schema["minimum"]:
                e((path or "/", "%s is below the minimum %s" % (value, schema["minimum"])))
            if "maximum" in schema and value > schema["maximum"]:
                e((path or "/", "%s is above the maximum %s" % (value, schema["maximum"])))
            if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
                e((path or "/", "%s is not above %s" % (value, schema["exclusiveMinimum"])))
            if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
                e((path or "/", "%s is not below %s" % (value, schema["exclusiveMaximum"])))
            if "multipleOf" in schema:
                q = value / schema["multipleOf"]
                if not math.isclose(q, round(q)):
                    e((path or "/", "%s is not a multiple of %s" % (value, schema["multipleOf"])))

        for sub in schema.get("allOf", []):
            out += self.errors(value, sub, path)
        if "anyOf" in schema:
            if not any(not self.errors(value, sub, path) for sub in schema["anyOf"]):
                e((path or "/", "matches none of anyOf: " + self._why(value, schema["anyOf"], path)))
        if "oneOf" in schema:
            matched = [i for i, sub in enumerate(schema["oneOf"]) if not self.errors(value, sub, path)]
            if len(matched) == 0:
                e((path or "/", "matches none of oneOf: " + self._why(value, schema["oneOf"], path)))
            elif len(matched) > 1:
                e((path or "/", "matches more than one of oneOf (%s)" % ", ".join(map(str, matched))))
        if "not" in schema and not self.errors(value, schema["not"], path):
            e((path or "/", "must not match the `not` schema"))
        if "if" in schema:
            if not self.errors(value, schema["if"], path):
                if "then" in schema:
                    out += self.errors(value, schema["then"], path)
            elif "else" in schema:
                out += self.errors(value, schema["else"], path)
        return out

    def _why(self, value, subs, path):
        """The first error of each alternative, for a readable message."""
        parts = []
        for i, sub in enumerate(subs):
            errs = self.errors(value, sub, path)
            if errs:
                parts.append("[%d] %s: %s" % (i, errs[0][0], errs[0][1]))
        return "; ".join(parts)

    def _object(self, value, schema, path):
        out = []
        for name in schema.get("required", []):
            if name not in value:
                out.append((path or "/", "missing required property %r" % name))
        if "minProperties" in schema and len(value) < schema["minProperties"]:
            out.append((path or "/", "fewer than %d properties" % schema["minProperties"]))
        if "maxProperties" in schema and len(value) > schema["maxProperties"]:
            out.append((path or "/", "more than %d properties" % schema["maxProperties"]))
        props = schema.get("properties", {})
        patterns = schema.get("patternProperties", {})
        for key, sub in value.items():
            where = "%s/%s" % (path, _pointer_escape(key))
            if "propertyNames" in schema:
                for p, msg in self.errors(key, schema["propertyNames"], where):
                    out.append((where, "property name: " + msg))
            known = False
            if key in props:
                known = True
                out += self.errors(sub, props[key], where)
            for pat, psub in patterns.items():
                if re.search(pat, key):
                    known = True
                    out += self.errors(sub, psub, where)
            if not known and "additionalProperties" in schema:
                add = schema["additionalProperties"]
                if add is False:
                    out.append((where, "property %r is not allowed here" % key))
                else:
                    out += self.errors(sub, add, where)
        return out

    def _array(self, value, schema, path):
        out = []
        if "minItems" in schema and len(value) < schema["minItems"]:
            out.append((path or "/", "fewer than %d items" % schema["minItems"]))
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            out.append((path or "/", "more than %d items" % schema["maxItems"]))
        if schema.get("uniqueItems"):
            for i in range(len(value)):
                for j in range(i):
                    if _equal(value[i], value[j]):
                        out.append((path or "/", "items %d and %d are equal" % (j, i)))
        prefix = schema.get("prefixItems", [])
        for i, item in enumerate(value):
            where = "%s/%d" % (path, i)
            if i < len(prefix):
                out += self.errors(item, prefix[i], where)
            elif "items" in schema:
                out += self.errors(item, schema["items"], where)
        return out


def validate(schema, instance):
    """Errors of instance against schema, as a list of "pointer: message"."""
    return ["%s: %s" % (p, m) for p, m in Validator(schema).errors(instance)]


def main(argv):
    if len(argv) < 3:
        sys.stderr.write("usage: validate_schema.py SCHEMA.json FILE.json...\n")
        return 2
    try:
        with open(argv[1]) as f:
            v = Validator(json.load(f))
    except (OSError, ValueError, SchemaError, re.error) as exc:
        sys.stderr.write("%s: bad schema: %s\n" % (argv[1], exc))
        return 2
    rc = 0
    for name in argv[2:]:
        try:
            with open(name) as f:
                doc = json.load(f)
        except (OSError, ValueError) as exc:
            print("%s: cannot read JSON: %s" % (name, exc))
            rc = max(rc, 1)
            continue
        for p, m in v.errors(doc):
            print("%s: %s: %s" % (name, p, m))
            rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
