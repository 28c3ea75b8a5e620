/**
 * Users' XPath expressions (a website's `item_root_xpath` and fields' `xpath`), checked before they
 * run, as CSS selectors are (selector-check.ts). They are parsed by the `xpath` library's own parser
 * (the one that runs them: xpath-select.ts), and its syntax tree is walked. XPath 1.0 has no loops,
 * no recursion and no user functions, so an expression's cost is set by its steps; refused are:
 *
 * - what is no XPath 1.0 expression, or uses what a page has not: variables (`$x`), namespace
 *   prefixes (`svg:path`), `id()` and functions outside XPath 1.0's core (`invalid`);
 * - the `following`, `preceding`, `following-sibling` and `preceding-sibling` axes: each candidate
 *   scans the rest of the page or of its list, quadratic in its length, as CSS's `~` is (refused
 *   there too). In the library a sibling axis reads every sibling before a `[1]` picks the first:
 *   `//li/following-sibling::li[1]` over 10,000 list items did not end within minutes;
 * - more than MAX_DESCENDANT_STEPS descendant steps (`//`, `descendant::`): the library keeps a node
 *   once per path that reaches it until the end of the expression, so each more `//` multiplies
 *   the work by the page's nesting depth;
 * - a descendant step or an absolute path (`/`, `//` at the start) inside a predicate nested in
 *   another, and an absolute path in any predicate: the predicate runs once per candidate, and each
 *   run would read the whole page (as `:has` inside `:has` does in CSS);
 * - in a field, an absolute path, or a descendant step after an upward one (`..//a`): a field is read
 *   once per item, from the item's root, and such a field would read the whole page each time;
 * - more than MAX_STEPS steps, MAX_UNION_PARTS parts joined by `|`, or predicates nested deeper than
 *   MAX_PREDICATE_DEPTH.
 *
 * What passes still runs where pages are parsed, on a thread with a time limit (the worker's parse
 * pool, TRAWL_PARSE_TIMEOUT_MS), never on a worker's main thread.
 */
import { xpathModule } from './xpath-select.ts';

/** Steps in one expression, predicates included (CSS: MAX_COMPOUNDS). */
export const MAX_STEPS = 16;
/** Parts of one expression joined by `|` (CSS: MAX_SELECTOR_LIST). */
export const MAX_UNION_PARTS = 16;
/** Predicates inside one another (`a[b[c]]` is 2; CSS: MAX_PSEUDO_DEPTH). */
export const MAX_PREDICATE_DEPTH = 2;
/** Descendant steps (`//`, `descendant::`, `descendant-or-self::`) in one expression. */
export const MAX_DESCENDANT_STEPS = 2;

/** Why an expression cannot be used: `invalid` (not XPath 1.0 over a page) or `costly`. */
export interface XPathProblem {
  readonly kind: 'invalid' | 'costly';
  readonly message: string;
}

/** Where an expression is used: an item root (from the page) or a field (from its item root). */
export type XPathRole = 'root' | 'field';

// The library's axis numbers (Step.ANCESTOR…Step.SELF).
const ANCESTOR = 0;
const ANCESTOR_OR_SELF = 1;
const DESCENDANT = 4;
const DESCENDANT_OR_SELF = 5;
const FOLLOWING = 6;
const FOLLOWING_SIBLING = 7;
const NAMESPACE = 8;
const PARENT = 9;
const PRECEDING = 10;
const PRECEDING_SIBLING = 11;

const REFUSED_AXES: Record<number, string> = {
  [FOLLOWING]: 'the following axis, which scans the rest of the page for each node',
  [PRECEDING]: 'the preceding axis, which scans the page before each node',
  [FOLLOWING_SIBLING]: 'the following-sibling axis, whose cost grows with the square of a list\'s length (as CSS `~`)',
  [PRECEDING_SIBLING]: 'the preceding-sibling axis, whose cost grows with the square of a list\'s length',
  [NAMESPACE]: 'the namespace axis, which an HTML page has no use for',
};
const UPWARD_AXES = new Set([ANCESTOR, ANCESTOR_OR_SELF, PARENT]);
const DESCENDANT_AXES = new Set([DESCENDANT, DESCENDANT_OR_SELF]);

/** XPath 1.0's core functions but `id()` (a page's ids are not indexed). */
const FUNCTIONS = new Set([
  'last', 'position', 'count', 'local-name', 'namespace-uri', 'name', 'string', 'concat', 'starts-with', 'contains',
  'substring-before', 'substring-after', 'substring', 'string-length', 'normalize-space', 'translate', 'boolean', 'not',
  'true', 'false', 'lang', 'number', 'sum', 'floor', 'ceiling', 'round',
]);

/** The library's syntax tree, as far as the check reads it. */
interface AstNode {
  readonly constructor: { readonly name: string };
  readonly lhs?: AstNode;
  readonly rhs?: AstNode;
  readonly filter?: AstNode;
  readonly filterPredicates?: readonly AstNode[];
  readonly locationPath?: { readonly absolute: boolean; readonly steps: readonly AstStep[] };
  readonly functionName?: string;
  readonly arguments?: readonly AstNode[];
}
interface AstStep {
  readonly axis: number;
  readonly nodeTest: { readonly prefix?: string | null };
  readonly predicates: readonly AstNode[];
}

/** Where in the expression the walk is. */
interface At {
  readonly predicateDepth: number;
  /** A step above (parent, ancestor) came earlier on this path: a descendant step now reads beyond the item. */
  readonly wentUp: boolean;
}

class Refusal extends Error {
  constructor(readonly problem: XPathProblem) {
    super(problem.message);
  }
}

/** The problem with `expression` in `role`, or null when it may run. */
export function xpathProblem(expression: string, role: XPathRole): XPathProblem | null {
  if (expression.trim() === '') return { kind: 'invalid', message: 'is empty' };
  let tree: AstNode;
  try {
    tree = xpathModule.parse(expression).expression.expression as AstNode;
  } catch (err) {
    return { kind: 'invalid', message: `is not an XPath 1.0 expression: ${(err as Error).message.split('\n')[0]}` };
  }
  if (role === 'root' && !selectsNodes(tree)) return { kind: 'invalid', message: 'selects no elements: an item root must be a path (such as //article)' };
  const count = { steps: 0, unions: 1, descendants: 0 };
  try {
    walk(tree, { predicateDepth: 0, wentUp: false }, role, count);
  } catch (err) {
    if (err instanceof Refusal) return err.problem;
    throw err;
  }
  return null;
}

/** Whether the expression's value is a node set: a path, a union, or a filtered one. */
function selectsNodes(node: AstNode): boolean {
  const kind = node.constructor.name;
  if (kind === 'BarOperation') return selectsNodes(node.lhs!) && selectsNodes(node.rhs!);
  if (kind !== 'PathExpr') return false;
  if (node.locationPath) return true;
  return node.filter !== undefined && selectsNodes(node.filter);
}

function walk(node: AstNode, at: At, role: XPathRole, count: { steps: number; unions: number; descendants: number }): void {
  const kind = node.constructor.name;
  if (kind === 'VariableReference') throw new Refusal({ kind: 'invalid', message: 'uses a variable; item XPaths have none' });
  if (kind === 'BarOperation') {
    count.unions += 1;
    if (count.unions > MAX_UNION_PARTS) throw costly(`joins more than ${MAX_UNION_PARTS} paths with |`);
  }
  if (kind === 'FunctionCall') {
    const name = node.functionName ?? '';
    if (!FUNCTIONS.has(name)) throw new Refusal({ kind: 'invalid', message: `calls ${name}(), which is not one of XPath 1.0's functions here` });
  }
  if (node.lhs) walk(node.lhs, at, role, count);
  if (node.rhs) walk(node.rhs, at, role, count);
  if (node.filter) walk(node.filter, at, role, count);
  for (const arg of node.arguments ?? []) walk(arg, at, role, count);
  for (const predicate of node.filterPredicates ?? []) walk(predicate, deeper(at), role, count);
  const path = node.locationPath;
  if (!path) return;
  if (path.absolute && at.predicateDepth > 0) throw costly('starts a path at the top of the page inside a predicate, which reads the whole page for each candidate');
  if (path.absolute && role === 'field') throw costly('starts at the top of the page: a field is read from its item root, once per item');
  let wentUp = at.wentUp;
  for (const step of path.steps) {
    count.steps += 1;
    if (count.steps > MAX_STEPS) throw costly(`has more than ${MAX_STEPS} steps`);
    const refused = REFUSED_AXES[step.axis];
    if (refused) throw costly(`uses ${refused}`);
    if (step.nodeTest.prefix) throw new Refusal({ kind: 'invalid', message: `uses the namespace prefix ${step.nodeTest.prefix}:, which an HTML page has not` });
    if (UPWARD_AXES.has(step.axis)) wentUp = true;
    if (DESCENDANT_AXES.has(step.axis)) {
      count.descendants += 1;
      if (count.descendants > MAX_DESCENDANT_STEPS) throw costly(`has more than ${MAX_DESCENDANT_STEPS} descendant steps (// or descendant::), each multiplying the work by the page's depth`);
      if (at.predicateDepth > 1) throw costly('uses a descendant step inside a nested predicate, which reads a subtree for each candidate of each candidate');
      if (wentUp && role === 'field') throw costly('goes up and then down again (such as ..//a), reading beyond its item once per item');
    }
    for (const predicate of step.predicates) walk(predicate, { ...deeper(at), wentUp }, role, count);
  }
}

function deeper(at: At): At {
  if (at.predicateDepth + 1 > MAX_PREDICATE_DEPTH) throw costly(`nests predicates more than ${MAX_PREDICATE_DEPTH} deep`);
  return { ...at, predicateDepth: at.predicateDepth + 1 };
}

function costly(message: string): Refusal {
  return new Refusal({ kind: 'costly', message });
}
