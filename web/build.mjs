// Bundles the exercise page (src/page.js, its CSS and KaTeX's fonts) and the list of exercises
// (src/catalog.js) into app/ui/static/dist, which the service serves under /ui/assets. Run by
// `make install`.
import * as esbuild from "esbuild";

await esbuild.build({
  // page.js imports page.css, so esbuild writes page.css beside page.js.
  entryPoints: ["src/page.js", "src/catalog.js"],
  outdir: "../app/ui/static/dist",
  entryNames: "[name]",
  bundle: true,
  minify: true,
  format: "esm",
  target: ["es2020"],
  loader: { ".woff2": "file", ".woff": "file", ".ttf": "file" },
  assetNames: "fonts/[name]-[hash]",
  logLevel: "warning",
});
