// The dashboard's charts: Chart.js on a canvas, each with its data as a table beside it (for a
// screen reader, a printout, or a reader who wants the numbers), its values written on the bars
// and its series told apart by dash and marker as well as colour, so no chart needs colour alone.
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
} from "chart.js";
import { h } from "../dom.js";
import { percent } from "./format.js";
import { scrollBox } from "./scroll_box.js";

Chart.register(BarController, BarElement, CategoryScale, LinearScale, LineController, LineElement, PointElement, Tooltip, Legend);

const INK = "#1d232b";
// Ticks of a share axis, as whole percents.
const PERCENT_TICKS = { callback: (value) => percent(value) };
const SERIES = [
  { color: "#1f5fbf", dash: [], point: "circle" },
  { color: "#a1261b", dash: [6, 4], point: "triangle" },
  { color: "#1b6e35", dash: [2, 3], point: "rectRot" },
  { color: "#7a3f9d", dash: [10, 3, 2, 3], point: "rect" },
  { color: "#8a5a00", dash: [1, 2], point: "star" },
  { color: "#0b6e78", dash: [12, 6], point: "crossRot" },
];
// The most series a line chart tells apart.
export const SERIES_COUNT = SERIES.length;

// Values on the bars themselves: read without the axis, and without colour.
const barLabels = {
  id: "barLabels",
  afterDatasetsDraw(chart, _args, options) {
    if (!options.format) return;
    const { ctx } = chart;
    const horizontal = chart.options.indexAxis === "y";
    ctx.save();
    ctx.fillStyle = INK;
    ctx.font = "12px system-ui, sans-serif";
    chart.getDatasetMeta(0).data.forEach((bar, index) => {
      const text = options.format(chart.data.datasets[0].data[index], index);
      if (horizontal) {
        ctx.textAlign = "left";
        ctx.textBaseline = "middle";
        ctx.fillText(text, bar.x + 4, bar.y);
      } else {
        ctx.textAlign = "center";
        ctx.textBaseline = "bottom";
        ctx.fillText(text, bar.x, bar.y - 2);
      }
    });
    ctx.restore();
  },
};

const pending = [];
const live = new Set();

// Draws the figures made since the last call, once they are in the page (Chart.js sizes a chart
// by its box): synchronously, so the view is whole when its data-ready is set.
export function drawCharts() {
  for (const { canvas, config } of pending.splice(0)) live.add(new Chart(canvas, config));
}

// Charts of a view that is replaced are destroyed with it (their listeners and canvases).
export function destroyCharts() {
  for (const chart of live) chart.destroy();
  live.clear();
  pending.length = 0;
}

function dataTable(caption, columns, rows) {
  const table = h(
    "table",
    { class: "data" },
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, columns.map((name, i) => h("th", { scope: "col", class: i ? "num" : "" }, name)))),
    h("tbody", {}, rows.map(([head, ...cells]) => h("tr", {}, h("th", { scope: "row" }, head), cells.map((cell) => h("td", { class: "num" }, cell))))),
  );
  return scrollBox(table);
}

// A figure: its title, the chart, a sentence that says what it shows, and the data table.
function figure(id, title, summary, canvasHeight, table, config) {
  const canvas = h("canvas", { role: "img", "aria-label": `${title}: ${summary}` });
  const frame = h("div", { class: "chart" }, canvas);
  frame.style.height = `${canvasHeight}px`; // CSSOM, not an inline style: the policy allows it
  const node = h(
    "figure",
    { class: "figure", id },
    h("figcaption", {}, h("h3", {}, title), h("p", { class: "facts" }, summary)),
    frame,
    h("details", { class: "data-details" }, h("summary", {}, "The numbers"), table),
  );
  pending.push({ canvas, config });
  return node;
}

const BASE = { animation: false, maintainAspectRatio: false, responsive: true };

// Bars, one series: `format` writes each value on its bar and in the table; `max` 1 makes the
// values shares, written as percents on the axis.
export function barChart({ id, title, summary, labels, values, format, axis, horizontal = false, max }) {
  const height = horizontal ? Math.max(120, 34 * labels.length + 40) : 260;
  const ticks = max === 1 ? PERCENT_TICKS : { precision: 0 };
  const valueScale = { beginAtZero: true, max, ticks, title: { display: true, text: axis }, grace: "12%" };
  return figure(
    id,
    title,
    summary,
    height,
    dataTable(title, ["", axis], labels.map((label, i) => [label, format(values[i], i)])),
    {
      type: "bar",
      data: { labels, datasets: [{ label: axis, data: values, backgroundColor: SERIES[0].color }] },
      options: {
        ...BASE,
        indexAxis: horizontal ? "y" : "x",
        // Room for the values written past the longest bar.
        layout: { padding: horizontal ? { right: 96 } : { top: 8 } },
        scales: horizontal ? { x: valueScale, y: { ticks: { autoSkip: false } } } : { y: valueScale },
        plugins: { legend: { display: false }, barLabels: { format } },
      },
      plugins: [barLabels],
    },
  );
}

// Lines over shared labels (days, weeks), each series (up to SERIES_COUNT) with its own dash and
// marker, on its own axis when `axis` says so (counts on the left, shares on the right).
export function lineChart({ id, title, summary, labels, series }) {
  const columns = ["", ...series.map((one) => one.label)];
  const rows = labels.map((label, i) => [label, ...series.map((one) => one.format(one.values[i]))]);
  return figure(id, title, summary, 280, dataTable(title, columns, rows), {
    type: "line",
    data: {
      labels,
      datasets: series.map((one, i) => ({
        label: one.label,
        data: one.values,
        yAxisID: one.axis,
        borderColor: SERIES[i].color,
        backgroundColor: SERIES[i].color,
        borderDash: SERIES[i].dash,
        pointStyle: SERIES[i].point,
        pointRadius: 3,
      })),
    },
    options: {
      ...BASE,
      interaction: { mode: "index", intersect: false },
      scales: {
        count: { position: "left", beginAtZero: true, title: { display: true, text: "count" } },
        // Drawn only where a series is a share: an empty axis would read as a scale of nothing.
        share: { display: "auto", position: "right", min: 0, max: 1, grid: { drawOnChartArea: false }, ticks: PERCENT_TICKS },
      },
      plugins: { legend: { labels: { usePointStyle: true } } },
    },
  });
}

export { dataTable };
