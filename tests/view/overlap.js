// Every problem with the <text> of the plots on the page: cut off by its SVG, or overlapping another text.
() => {
  const problems = [];
  for (const svg of document.querySelectorAll("svg.plot")) {
    const box = svg.getBoundingClientRect();
    const texts = Array.from(svg.querySelectorAll("text")).filter((t) => t.textContent.trim());
    const info = texts.map((t) => ({ t, m: t.getCTM(), b: t.getBBox(), r: t.getBoundingClientRect() }));
    for (const x of info) {
      if (x.r.left < box.left - 0.5 || x.r.right > box.right + 0.5 || x.r.top < box.top - 0.5 || x.r.bottom > box.bottom + 0.5) {
        problems.push(`cut off: ${x.t.textContent}`);
      }
    }
    for (let i = 0; i < info.length; i++) {
      for (let j = i + 1; j < info.length; j++) {
        const a = info[i], b = info[j];
        let hit;
        const same = Math.abs(a.m.a - b.m.a) < 1e-6 && Math.abs(a.m.b - b.m.b) < 1e-6;
        if (same) {
          // same rotation: compare in a's own frame, where both boxes are upright
          const toA = a.m.inverse().multiply(b.m);
          const pts = [[b.b.x, b.b.y], [b.b.x + b.b.width, b.b.y + b.b.height]].map(([x, y]) => new DOMPoint(x, y).matrixTransform(toA));
          const bx0 = Math.min(pts[0].x, pts[1].x), bx1 = Math.max(pts[0].x, pts[1].x);
          const by0 = Math.min(pts[0].y, pts[1].y), by1 = Math.max(pts[0].y, pts[1].y);
          hit = Math.min(a.b.x + a.b.width, bx1) - Math.max(a.b.x, bx0) > 0.5 && Math.min(a.b.y + a.b.height, by1) - Math.max(a.b.y, by0) > 0.5;
        } else {
          hit = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left) > 0.5 && Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top) > 0.5;
        }
        if (hit) problems.push(`overlap: ${JSON.stringify(a.t.textContent)} / ${JSON.stringify(b.t.textContent)} in ${svg.getAttribute("aria-label")}`);
      }
    }
  }
  return problems;
}
