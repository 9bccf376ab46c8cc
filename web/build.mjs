// Bundles the exercise page (src/page.js, its CSS and KaTeX's fonts), the list of exercises
// (src/catalog.js) and the course dashboard (src/dashboard.js, its CSS, Chart.js) into
// app/ui/static/dist, which the service serves under /ui/assets. What two pages share (the
// editor) goes in a chunk both load, so it is downloaded and cached once. The API's docs pages
// (/docs, /redoc) load Swagger UI's and ReDoc's prebuilt bundles as the packages ship them, copied
// beside the small modules that start them (src/swagger.js, src/redoc.js). Run by `make install`.
import { readFile, writeFile } from "node:fs/promises";
import * as esbuild from "esbuild";

const OUTDIR = "../app/ui/static/dist";
const PREBUILT = [
  "swagger-ui-dist/swagger-ui-bundle.js",
  "swagger-ui-dist/swagger-ui.css",
  "redoc/bundles/redoc.standalone.js",
];
// ReDoc's sidebar shows Redocly's logo from their CDN: the copy points it at nothing (the image
// then hides itself), so the docs pages ask no other host for anything.
const OFFLINE = { "https://cdn.redoc.ly/redoc/logo-mini.svg": "data:," };

await esbuild.build({
  // page.js imports page.css, so esbuild writes page.css beside page.js.
  entryPoints: [
    "src/page.js",
    "src/catalog.js",
    "src/dashboard.js",
    "src/swagger.js",
    "src/redoc.js",
  ],
  outdir: OUTDIR,
  entryNames: "[name]",
  chunkNames: "chunks/[name]-[hash]",
  splitting: true,
  bundle: true,
  minify: true,
  format: "esm",
  target: ["es2020"],
  loader: { ".woff2": "file", ".woff": "file", ".ttf": "file" },
  assetNames: "fonts/[name]-[hash]",
  logLevel: "warning",
});

// esbuild has made OUTDIR.
for (const file of PREBUILT) {
  let text = await readFile(`node_modules/${file}`, "utf8");
  for (const [url, local] of Object.entries(OFFLINE)) text = text.replaceAll(url, local);
  await writeFile(`${OUTDIR}/${file.split("/").pop()}`, text);
}
