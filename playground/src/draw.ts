/**
 * Draws a run as a marble diagram in SVG (V2), in the manner of RxJS's documentation: the inputs on
 * top — a lane per provider call, tool run and cold line, each from its subscription (`^`) to its
 * unsubscription (`!`) — the operator in a box, the loop's output below, all on one time axis of frames.
 * Events of one frame sit side by side in a pill, as a group `(abc)` does in marble syntax, at their frame
 * (the lane's marble line, in `data-line`, counts a group's characters as frames as marble syntax does).
 * An agent tool's inner loop is drawn right under its call, indented, with its provider calls and tool runs
 * under it (V5, RxViz-style nesting): `data-depth` says how deep.
 */
import { laneLine, runsLine } from './recorder';
import type { Lane, Mark } from './recorder';

export interface View {
  inputs: Lane[];
  loop?: Lane;
  operator: string;
  /** Draw what happened up to this frame (the slider). */
  upTo: number;
  /** The last frame of the run so far: the axis is at least this long. */
  end: number;
  /** Draw the line of the current frame (while running or replaying). */
  cursor: boolean;
}

/** Each drawn marble, by its `data-mark` key. */
export type Drawn = Map<string, { lane: Lane; mark: Mark }>;

const SVG = 'http://www.w3.org/2000/svg';
const LABEL = 168;
const AXIS = 34;
const LANE = 52;
const BOX = 46;
const R = 11;

export function render(svg: SVGSVGElement, view: View, available: number): Drawn {
  const drawn: Drawn = new Map();
  const frames = Math.max(view.end + 4, 24);
  const w = Math.max(14, Math.min(40, Math.floor((available - LABEL - 24) / frames)));
  const r = Math.min(w >= 32 ? R + 1 : R, w / 2 + 3);
  const x = (frame: number) => LABEL + 12 + frame * w + w / 2;
  const right = x(frames) - w / 2;
  const inputs = nestedOrder(view.inputs.filter((lane) => lane.subscribed <= view.upTo));
  const height = AXIS + inputs.length * LANE + BOX + LANE + 16;
  const width = right + 16;
  svg.replaceChildren();
  svg.setAttribute('width', String(width));
  svg.setAttribute('height', String(height));
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);

  // the time axis: a line a frame, a number every five
  const grid = el(svg, 'g', { class: 'grid' });
  for (let f = 0; f < frames; f++) {
    el(grid, 'line', { x1: x(f), x2: x(f), y1: AXIS - 6, y2: height - 10, class: f % 5 === 0 ? 'tick major' : 'tick' });
    if (f % 5 === 0) text(grid, x(f), AXIS - 12, String(f), 'tick-label');
  }
  text(grid, LABEL - 6, AXIS - 12, 'frame', 'tick-label axis-name');

  let y = AXIS + LANE / 2;
  for (const lane of inputs) {
    drawLane(svg, lane, y, view.upTo, x, right, r, drawn);
    y += LANE;
  }
  // the operator, as the docs draw it: a box across the diagram
  const box = el(svg, 'g', { class: 'operator' });
  el(box, 'rect', { x: LABEL, y: y - LANE / 2 + 8, width: right - LABEL, height: BOX - 12, rx: 6 });
  text(box, (LABEL + right) / 2, y - LANE / 2 + 8 + (BOX - 12) / 2 + 5, view.operator, 'operator-name');
  y += BOX - LANE / 2 + LANE / 2 + 4;
  if (view.loop !== undefined && view.loop.subscribed <= view.upTo) drawLane(svg, view.loop, y, view.upTo, x, right, r, drawn);

  if (view.cursor) {
    const now = el(svg, 'g', { class: 'now' });
    el(now, 'line', { x1: x(view.upTo), x2: x(view.upTo), y1: AXIS - 8, y2: height - 8 });
  }
  return drawn;
}

/** The lanes by subscription, each lane's nested lanes (V5) right under it, in their own order. */
export function nestedOrder(lanes: readonly Lane[]): Lane[] {
  const bySubscription = (a: Lane, b: Lane) => a.subscribed - b.subscribed || a.id - b.id;
  const ids = new Set(lanes.map((lane) => lane.id));
  const children = new Map<number, Lane[]>();
  const roots: Lane[] = [];
  for (const lane of lanes) {
    if (lane.parent !== undefined && ids.has(lane.parent)) children.set(lane.parent, [...(children.get(lane.parent) ?? []), lane]);
    else roots.push(lane);
  }
  const out: Lane[] = [];
  const visit = (lane: Lane) => {
    out.push(lane);
    for (const child of (children.get(lane.id) ?? []).sort(bySubscription)) visit(child);
  };
  for (const root of roots.sort(bySubscription)) visit(root);
  return out;
}

function drawLane(svg: SVGSVGElement, lane: Lane, y: number, upTo: number, x: (f: number) => number, right: number, r: number, drawn: Drawn): void {
  const ended = lane.unsubscribed !== undefined && lane.unsubscribed <= upTo;
  const depth = lane.depth ?? 0;
  const g = el(svg, 'g', { class: `lane lane-${lane.kind}${depth > 0 ? ' lane-nested' : ''}`, 'data-kind': lane.kind, 'data-label': lane.label, 'data-line': laneLine(lane), 'data-runs': runsLine(lane), 'data-depth': depth });
  // V5: a nested lane sits on a band that starts further right the deeper it is, under its call
  if (depth > 0) el(g, 'rect', { x: 4 + depth * 10, y: y - LANE / 2 + 2, width: right - 4 - depth * 10, height: LANE - 4, rx: 4, class: 'nest' });
  text(g, LABEL - 10, y - 2, depth > 0 ? `${'↳'.padStart(depth, ' ')} ${lane.label}` : lane.label, 'lane-label');
  text(g, LABEL - 10, y + 13, lane.caption, 'lane-caption');
  el(g, 'line', { x1: x(0) - 8, x2: right, y1: y, y2: y, class: 'rail' });
  const from = x(lane.subscribed);
  const to = ended ? x(lane.unsubscribed!) : x(upTo) + 10;
  el(g, 'line', { x1: from, x2: to, y1: y, y2: y, class: 'active' });
  if (!ended) el(g, 'path', { d: `M ${to} ${y} l -8 -5 v 10 z`, class: 'arrow' });
  // `^` and `!` under the line, as a subscription line draws them; `(^!)` side by side
  const both = ended && lane.unsubscribed === lane.subscribed;
  text(g, from - (both ? 4 : 0), y + r + 14, '^', 'sub-mark');
  if (ended) text(g, x(lane.unsubscribed!) + (both ? 4 : 0), y + r + 14, '!', 'unsub-mark');

  const visible = lane.marks.filter((mark) => mark.frame <= upTo);
  const step = Math.min(2 * r - 3, x(1) - x(0) + 4);
  // each group at its own frame; one that would overlap the group before it moves right just enough
  let free = -Infinity;
  for (const marks of sameFrame(visible)) {
    const cx = Math.max(x(marks[0]!.frame), free + r + 6);
    free = cx + (marks.length - 1) * step + r;
    if (marks.length > 1) {
      el(g, 'rect', { x: cx - r - 4, y: y - r - 4, width: (marks.length - 1) * step + 2 * r + 8, height: 2 * r + 8, rx: r + 4, class: 'group' });
    }
    marks.forEach((mark, i) => {
      const key = `${lane.id}:${lane.marks.indexOf(mark)}`;
      drawn.set(key, { lane, mark });
      const m = el(g, 'g', {
        class: `marble tone-${mark.tone}`,
        'data-mark': key,
        'data-frame': mark.frame,
        'data-letter': mark.letter,
        transform: `translate(${cx + i * step} ${y})`,
      });
      if (mark.kind === 'C') {
        el(m, 'line', { x1: 0, x2: 0, y1: -r - 2, y2: r + 2, class: 'complete' });
        el(m, 'rect', { x: -5, y: -r - 2, width: 10, height: 2 * r + 4, class: 'hit' });
      } else if (mark.kind === 'E') {
        el(m, 'path', { d: `M ${-r + 3} ${-r + 3} L ${r - 3} ${r - 3} M ${r - 3} ${-r + 3} L ${-r + 3} ${r - 3}`, class: 'error' });
        el(m, 'rect', { x: -r, y: -r, width: 2 * r, height: 2 * r, class: 'hit' });
      } else {
        el(m, 'circle', { r, class: 'ball' });
        text(m, 0, 4.5, mark.letter, 'letter');
      }
    });
  }
}

/** Consecutive marks of one frame, together. */
function sameFrame(marks: readonly Mark[]): Mark[][] {
  const found: Mark[][] = [];
  for (const mark of marks) {
    const last = found[found.length - 1];
    if (last !== undefined && last[0]!.frame === mark.frame) last.push(mark);
    else found.push([mark]);
  }
  return found;
}

function el(parent: Element, name: string, attributes: Record<string, string | number>): SVGElement {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  parent.appendChild(node);
  return node;
}

function text(parent: Element, x: number, y: number, content: string, className: string): SVGElement {
  const node = el(parent, 'text', { x, y, class: className });
  node.textContent = content;
  return node;
}
