// A loopback TCP listener for the hostile-server test: listens on
// 127.0.0.1 (an ephemeral port, written to PORTFILE), appends whatever each
// connection sends to LOGFILE, and exits after SECONDS whatever happens.
//
//   node listener.mjs PORTFILE LOGFILE SECONDS
import fs from "node:fs";
import net from "node:net";

const [portFile, logFile, seconds] = process.argv.slice(2);
const srv = net.createServer((sock) => {
	sock.setTimeout(3000, () => sock.destroy());
	sock.on("data", (d) => fs.appendFileSync(logFile, d));
	sock.on("error", () => {});
});
srv.listen(0, "127.0.0.1", () => {
	fs.writeFileSync(portFile + ".tmp", String(srv.address().port));
	fs.renameSync(portFile + ".tmp", portFile);
});
setTimeout(() => process.exit(0), Number(seconds || 60) * 1000).unref();
