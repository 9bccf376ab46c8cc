// Starts ReDoc on /redoc. The page loads ReDoc's standalone bundle (the global Redoc) before this
// module, both from /ui/assets: no CDN, no inline script, and system fonts (none fetched).
import "./api-docs.css";

const root = document.getElementById("redoc");
const sans = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif';
const mono = 'ui-monospace, "SFMono-Regular", Menlo, Consolas, "Liberation Mono", monospace';

const options = {
  // ReDoc's search runs in a Worker made from a blob: URL, which `script-src 'self'` refuses;
  // the policy stays strict and the page goes without the search box.
  disableSearch: true,
  theme: {
    typography: { fontFamily: sans, headings: { fontFamily: sans }, code: { fontFamily: mono } },
  },
};

Redoc.init(root.dataset.specUrl, options, root, () => {
  document.body.dataset.ready = "true";
});
