// A baseline for startup.js: a node process that imports the modules named
// on its command line (none: bare node), prints the ready line, and idles.
for (const name of process.argv.slice(2)) await import(name);
process.stdout.write('{"ev":"ready"}\n');
const timer = setInterval(() => {}, 1 << 30);
process.on("SIGTERM", () => clearInterval(timer));
