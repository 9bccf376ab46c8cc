// Bundles the exercise page (src/page.js, its CSS and KaTeX's fonts), the list of exercises
// (src/catalog.js) and the course dashboard (src/dashboard.js, its CSS, Chart.js) into
// app/ui/static/dist, which the service serves under /ui/assets. What two pages share (the
// editor) goes in a chunk both load, so it is downloaded and cached once. Run by `make install`.
import * as esbuild from "esbuild";

await esbuild.build({
  // page.js imports page.css, so esbuild writes page.css beside page.js.
  entryPoints: ["src/page.js", "src/catalog.js", "src/dashboard.js"],
  outdir: "../app/ui/static/dist",
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
