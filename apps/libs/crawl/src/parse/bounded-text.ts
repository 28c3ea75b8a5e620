/**
 * The text of an element read with a character budget. cheerio's `text()` (domutils' textContent)
 * joins every text node below the element before anything can be cut, so a field on a nested root
 * of a 10 MB page read all 10 MB, once per root. These walk the text nodes in document order (as
 * textContent does: text of elements and CDATA, not of comments) and stop once the budget is
 * spent; below the budget they answer exactly what textContent (then collapsing and trimming)
 * would.
 */
import { hasChildren, isComment, isText, type AnyNode } from 'domhandler';

/** Whitespace as JavaScript's `\s` and `trim()` define it. */
function isSpace(c: number): boolean {
  if (c > 32 && c < 0xa0) return false;
  return (
    c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff
  );
}

/** Calls `visit` with each text node's data below `node`, in document order, until it returns false. */
function eachText(node: AnyNode, visit: (data: string) => boolean): void {
  if (isText(node)) {
    visit(node.data);
    return;
  }
  if (!hasChildren(node) || isComment(node)) return;
  // Iterative: nesting is capped (load-html.ts), but a stack of arrays costs less than recursion.
  const stack: { nodes: readonly AnyNode[]; at: number }[] = [{ nodes: node.children, at: 0 }];
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if (top.at >= top.nodes.length) {
      stack.pop();
      continue;
    }
    const child = top.nodes[top.at++]!;
    if (isText(child)) {
      if (!visit(child.data)) return;
    } else if (hasChildren(child) && !isComment(child)) {
      stack.push({ nodes: child.children, at: 0 });
    }
  }
}

/** `text` cut to `max` characters, never between the two halves of a surrogate pair. */
export function cutAt(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const last = cut.charCodeAt(cut.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut;
}

/** The first `max` characters of the element's text (cheerio's `text()`, cut). */
export function rawText(node: AnyNode, max: number): string {
  let out = '';
  eachText(node, (data) => {
    out += data.length > max - out.length ? data.slice(0, max - out.length + 1) : data;
    return out.length <= max;
  });
  return cutAt(out, max);
}

/**
 * The element's text with whitespace runs collapsed to one space and trimmed, cut to `max`
 * characters: `cutAt(text().replace(/\s+/g, ' ').trim(), max)`, reading no further than needed.
 */
export function collapsedText(node: AnyNode, max: number): string {
  let out = '';
  let space = false;
  eachText(node, (data) => {
    const len = data.length;
    let i = 0;
    while (i < len) {
      if (isSpace(data.charCodeAt(i))) {
        if (out.length > 0) space = true;
        i++;
        continue;
      }
      if (space) {
        out += ' ';
        space = false;
      }
      // One character past the budget is enough to know the text goes on.
      const stop = Math.min(len, i + max - out.length + 1);
      let j = i;
      while (j < stop && !isSpace(data.charCodeAt(j))) j++;
      out += data.slice(i, j);
      if (out.length > max) return false;
      i = j;
    }
    return true;
  });
  return cutAt(out, max);
}
