// The pages' interactive charts (charts.py writes each one's JSON into a
// <div class="chart">). uPlot draws them; here: the overview first, the samples as
// measured once a zoom leaves few enough in view, and zoom and pan by the mouse wheel.
//   drag: zoom to the span; wheel: zoom around the cursor; shift + wheel: pan;
//   double-click: the whole run again; click a legend entry: hide or show its line.
(function () {
  "use strict";
  const DETAIL_POINTS_MAX = 6000; // about five samples per pixel across all lines
  const WHEEL_ZOOM = 0.8;
  const WHEEL_PAN = 0.1;
  const HEIGHT_PX = 340;

  // The first index of sorted `values` at or above `x`.
  function lowerBound(values, x) {
    let low = 0;
    let high = values.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (values[middle] < x) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  // A line's samples within [min, max], with one more on each side so that the line
  // reaches the chart's edges.
  function within(line, min, max) {
    const from = Math.max(lowerBound(line[0], min) - 1, 0);
    const to = Math.min(lowerBound(line[0], max) + 1, line[0].length);
    return [line[0].slice(from, to), line[1].slice(from, to)];
  }

  // uPlot's data from lines with their own times: the union of times, null where a line
  // has no sample (uPlot draws across, spanGaps).
  function aligned(lines) {
    const times = Array.from(new Set(lines.flatMap((line) => line[0]))).sort((a, b) => a - b);
    const position = new Map(times.map((t, i) => [t, i]));
    const columns = lines.map(([t, y]) => {
      const column = new Array(times.length).fill(null);
      t.forEach((time, i) => { column[position.get(time)] = y[i]; });
      return column;
    });
    return [times, ...columns];
  }

  function options(spec, width, onScale) {
    return {
      title: spec.title,
      width: width,
      height: HEIGHT_PX,
      scales: { x: { time: false } },
      axes: [{ label: spec.x_label }, { label: spec.y_label }],
      series: [
        { label: spec.x_label },
        ...spec.lines.map((line) => ({
          label: line.label,
          stroke: line.colour,
          width: 1,
          dash: line.dash.length ? line.dash : undefined,
          spanGaps: true,
        })),
      ],
      cursor: { drag: { x: true, y: false }, bind: { dblclick: () => null } },
      hooks: { setScale: [(u, key) => { if (key === "x") onScale(u); }] },
    };
  }

  function wheelZoomAndPan(u) {
    u.over.addEventListener("wheel", (event) => {
      event.preventDefault();
      const { min, max } = u.scales.x;
      const range = max - min;
      if (event.shiftKey) {
        const shift = Math.sign(event.deltaY || event.deltaX) * WHEEL_PAN * range;
        u.setScale("x", { min: min + shift, max: max + shift });
        return;
      }
      const at = u.posToVal(event.offsetX, "x");
      const factor = event.deltaY < 0 ? WHEEL_ZOOM : 1 / WHEEL_ZOOM;
      u.setScale("x", { min: at - (at - min) * factor, max: at + (max - at) * factor });
    }, { passive: false });
  }

  function draw(element) {
    const spec = JSON.parse(element.querySelector("script").textContent);
    let busy = false;
    // Swapped after uPlot's own update (a microtask): data changed during its setScale
    // would be drawn against the old scale. setData rescales x to the data, so the view
    // asked for is set again after it.
    function showFittingData(u) {
      if (busy || !spec.detail) return;
      const { min, max } = u.scales.x;
      const inView = spec.detail.map((line) => within(line, min, max));
      const count = inView.reduce((sum, line) => sum + line[0].length, 0);
      const detail = count <= DETAIL_POINTS_MAX;
      if (!detail && element.dataset.showing === "overview") return;
      queueMicrotask(() => {
        busy = true;
        u.setData(detail ? aligned(inView) : spec.overview, true);
        u.setScale("x", { min, max });
        element.dataset.showing = detail ? "samples" : "overview";
        busy = false;
      });
    }
    const target = element.querySelector(".chart-area");
    const u = new uPlot(options(spec, target.clientWidth, showFittingData), spec.overview, target);
    element.dataset.showing = "overview";
    wheelZoomAndPan(u);
    u.over.addEventListener("dblclick", () => {
      element.dataset.showing = "overview";
      u.setData(spec.overview, true);
    });
    element.uplot = u; // for the page's test
  }

  document.addEventListener("DOMContentLoaded", () => {
    document.querySelectorAll(".chart").forEach(draw);
  });
})();
