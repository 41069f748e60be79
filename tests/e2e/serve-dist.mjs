// A small static file server for the release build, used by the end-to-end tests.
//
//   node serve-dist.mjs [--root DIR] [--port N] [--sub-path /sub/path/] [--gzip on]
//
// Serves DIR (default: ../../dist) at `/` and again under the sub-path, so the tests can check
// that the build only uses relative URLs. Port 0 (the default) picks a free port. The first
// line printed is `listening <url>` so a caller can read the address. With `--gzip on`, the
// HTML, JavaScript, CSS and wasm go gzipped to a browser that accepts it, as a blog's host
// sends them; the benchmarks load the app this way.

import { createServer } from "node:http";
import { createReadStream, promises as fs } from "node:fs";
import { gzipSync } from "node:zlib";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));

const MIME_TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".wasm": "application/wasm",
  ".json": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".ico": "image/x-icon",
  ".txt": "text/plain; charset=utf-8",
  ".woff2": "font/woff2",
  ".map": "application/json; charset=utf-8",
};

function parseArgs(argv) {
  const options = {
    root: path.resolve(here, "../../dist"),
    port: 0,
    subPath: "/sub/path/",
    gzip: false,
  };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`missing value for ${flag}`);
    if (flag === "--root") options.root = path.resolve(value);
    else if (flag === "--port") options.port = Number(value);
    else if (flag === "--sub-path") options.subPath = value;
    else if (flag === "--gzip") options.gzip = value === "on";
    else throw new Error(`unknown option ${flag}`);
  }
  if (!options.subPath.startsWith("/") || !options.subPath.endsWith("/")) {
    throw new Error("--sub-path must start and end with '/'");
  }
  return options;
}

/** Maps a URL path to a file under `root`, or null when it would leave `root`. */
function resolveFile(root, urlPath) {
  let decoded;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  const file = path.resolve(root, "." + path.posix.normalize(decoded));
  if (file !== root && !file.startsWith(root + path.sep)) return null;
  return file;
}

function send(res, status, body, headers = {}) {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", ...headers });
  res.end(body);
}

async function handle(options, req, res) {
  if (req.method !== "GET" && req.method !== "HEAD") {
    return send(res, 405, "method not allowed\n", { allow: "GET, HEAD" });
  }
  const url = new URL(req.url, "http://localhost");
  let urlPath = url.pathname;

  // The sub-path mount: /sub/path redirects to /sub/path/, and /sub/path/x serves /x.
  const mount = options.subPath;
  if (urlPath === mount.slice(0, -1)) {
    return send(res, 301, "", { location: mount + url.search });
  }
  if (urlPath.startsWith(mount)) urlPath = urlPath.slice(mount.length - 1);

  let file = resolveFile(options.root, urlPath);
  if (file === null) return send(res, 404, "not found\n");
  let stat = await fs.stat(file).catch(() => null);
  if (stat?.isDirectory()) {
    if (!url.pathname.endsWith("/")) {
      return send(res, 301, "", { location: url.pathname + "/" + url.search });
    }
    file = path.join(file, "index.html");
    stat = await fs.stat(file).catch(() => null);
  }
  if (!stat?.isFile()) return send(res, 404, "not found\n");

  const headers = {
    "content-type": MIME_TYPES[path.extname(file).toLowerCase()] ?? "application/octet-stream",
    "content-length": stat.size,
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
  };
  const accepts = /\bgzip\b/.test(req.headers["accept-encoding"] ?? "");
  if (options.gzip && COMPRESSED.test(file)) {
    headers.vary = "accept-encoding";
    if (accepts) {
      const body = await gzipped(file, stat);
      res.writeHead(200, { ...headers, "content-encoding": "gzip", "content-length": body.length });
      return res.end(req.method === "HEAD" ? undefined : body);
    }
  }
  res.writeHead(200, headers);
  if (req.method === "HEAD") return res.end();
  createReadStream(file).pipe(res);
}

/** The files a host would compress. */
const COMPRESSED = /\.(html|js|mjs|css|wasm|json|svg)$/i;

/** Each file's gzipped bytes, made once per version of the file. */
const GZIPPED = new Map();

async function gzipped(file, stat) {
  const key = `${file}:${stat.mtimeMs}:${stat.size}`;
  if (!GZIPPED.has(key)) GZIPPED.set(key, gzipSync(await fs.readFile(file), { level: 9 }));
  return GZIPPED.get(key);
}

const options = parseArgs(process.argv.slice(2));
const indexStat = await fs.stat(path.join(options.root, "index.html")).catch(() => null);
if (!indexStat?.isFile()) {
  console.error(`serve-dist: no index.html in ${options.root}; run 'trunk build --release' first`);
  process.exit(1);
}

const server = createServer((req, res) => {
  handle(options, req, res).catch((err) => {
    console.error(`serve-dist: ${req.method} ${req.url}: ${err.message}`);
    if (!res.headersSent) send(res, 500, "internal error\n");
    else res.destroy();
  });
});

server.listen(options.port, "127.0.0.1", () => {
  const { port } = server.address();
  console.log(`listening http://127.0.0.1:${port}/`);
  console.log(`serving ${options.root} at / and at ${options.subPath}`);
});

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => process.exit(0));
}
