/**
 * The parsed page (domhandler's nodes, as htmlparser2 builds them: load-html.ts) as the W3C DOM the
 * `xpath` library walks: `nodeType`, `nodeName`/`localName`, `parentNode`, `firstChild`,
 * `nextSibling`, `attributes` as attribute nodes with an `ownerElement`. domhandler's nodes have
 * some of these and not others (no attribute nodes, no `localName`), and patching its prototypes
 * would change the library for everything else in the process; each node therefore gets a view,
 * made when XPath first reaches it and kept per document, so a node is always the same object (the
 * library compares nodes by identity).
 *
 * Views read the tree live (a nested item root is read with its children hidden: extract-items.ts).
 * Document order, which the library asks for to sort every node set, is answered from one index
 * of the document's nodes built with the view: without `compareDocumentPosition` the library
 * scans a parent's children for each comparison, and sorting 10,000 siblings would cost 10^9 steps.
 *
 * Doctype declarations and other directives are not nodes in XPath's data model, and are skipped.
 */
import { isCDATA, isComment, isDocument, isTag, isText, type AnyNode, type Document, type Element, type ParentNode } from 'domhandler';

const ELEMENT = 1;
const ATTRIBUTE = 2;
const TEXT = 3;
const CDATA = 4;
const COMMENT = 8;
const DOCUMENT = 9;

/** A node of the view: the DOM shape the xpath library reads. */
export interface DomNode {
  readonly nodeType: number;
  readonly nodeName: string;
}

/** The node a view stands for (an attribute's is its element). */
export function rawOf(node: DomNode): AnyNode {
  return (node as ViewNode).raw;
}

/** An attribute view's element and name; null for other nodes. */
export function attributeOfView(node: DomNode): { element: Element; name: string } | null {
  return node instanceof AttrView ? { element: node.owner.raw as Element, name: node.name } : null;
}

/** The view of a parsed document: made once per document, before its items are read (extract-items.ts). */
export class DocumentView {
  private readonly views = new Map<AnyNode, ViewNode>();
  /** Document order: each node's position in a depth-first walk. */
  private readonly order = new Map<AnyNode, number>();

  constructor(readonly doc: Document) {
    let i = 0;
    const stack: AnyNode[] = [doc];
    while (stack.length > 0) {
      const node = stack.pop()!;
      this.order.set(node, i++);
      const children = (node as ParentNode).children;
      if (children) for (let c = children.length - 1; c >= 0; c--) stack.push(children[c]!);
    }
  }

  /** The view of a node of this document. */
  of(node: AnyNode): DomNode {
    return this.view(node);
  }

  /** @internal */
  view(node: AnyNode): ViewNode {
    let v = this.views.get(node);
    if (!v) {
      v = node === this.doc ? new DocView(node, this) : new ViewNode(node, this);
      this.views.set(node, v);
    }
    return v;
  }

  /** @internal Position in document order; a node made after the view (none are) sorts last. */
  position(node: AnyNode): number {
    return this.order.get(node) ?? Number.MAX_SAFE_INTEGER;
  }
}

/** Whether a domhandler node is a node of XPath's data model. */
function inModel(node: AnyNode): boolean {
  return isTag(node) || isText(node) || isCDATA(node) || isComment(node) || isDocument(node);
}

class ViewNode implements DomNode {
  constructor(
    readonly raw: AnyNode,
    protected readonly dv: DocumentView,
  ) {}

  readonly namespaceURI = null;
  readonly prefix = null;

  get nodeType(): number {
    const n = this.raw;
    if (isTag(n)) return ELEMENT;
    if (isText(n)) return TEXT;
    if (isCDATA(n)) return CDATA;
    if (isDocument(n)) return DOCUMENT;
    return COMMENT;
  }

  get nodeName(): string {
    switch (this.nodeType) {
      case ELEMENT:
        return (this.raw as Element).name;
      case TEXT:
        return '#text';
      case CDATA:
        return '#cdata-section';
      case DOCUMENT:
        return '#document';
      default:
        return '#comment';
    }
  }

  get localName(): string | null {
    return this.nodeType === ELEMENT ? (this.raw as Element).name : null;
  }

  get tagName(): string | undefined {
    return this.nodeType === ELEMENT ? (this.raw as Element).name : undefined;
  }

  get nodeValue(): string | null {
    const t = this.nodeType;
    return t === TEXT || t === CDATA || t === COMMENT ? ((this.raw as { data?: string }).data ?? '') : null;
  }

  get data(): string | null {
    return this.nodeValue;
  }

  get ownerDocument(): DomNode | null {
    return this.raw === this.dv.doc ? null : this.dv.view(this.dv.doc);
  }

  get parentNode(): ViewNode | null {
    const p = this.raw.parent;
    return p ? this.dv.view(p) : null;
  }

  get childNodes(): ViewNode[] {
    const children = (this.raw as ParentNode).children;
    if (!children) return [];
    const out: ViewNode[] = [];
    for (const c of children) if (inModel(c)) out.push(this.dv.view(c));
    return out;
  }

  get firstChild(): ViewNode | null {
    const children = (this.raw as ParentNode).children;
    if (!children) return null;
    for (const c of children) if (inModel(c)) return this.dv.view(c);
    return null;
  }

  get lastChild(): ViewNode | null {
    const children = (this.raw as ParentNode).children;
    if (!children) return null;
    for (let i = children.length - 1; i >= 0; i--) if (inModel(children[i]!)) return this.dv.view(children[i]!);
    return null;
  }

  get nextSibling(): ViewNode | null {
    let s = this.raw.next;
    while (s && !inModel(s)) s = s.next;
    return s ? this.dv.view(s) : null;
  }

  get previousSibling(): ViewNode | null {
    let s = this.raw.prev;
    while (s && !inModel(s)) s = s.prev;
    return s ? this.dv.view(s) : null;
  }

  private attrViews: AttrView[] | undefined;

  /** Attribute nodes, one object per attribute for the element's life (identity matters to the library). */
  get attributes(): AttrView[] & { item(i: number): AttrView | null } {
    if (!this.attrViews) {
      const attribs = this.nodeType === ELEMENT ? (this.raw as Element).attribs : {};
      this.attrViews = Object.keys(attribs).map((name, i) => new AttrView(this, name, i));
    }
    const list = this.attrViews as AttrView[] & { item?: (i: number) => AttrView | null };
    list.item ??= (i: number) => list[i] ?? null;
    return list as AttrView[] & { item(i: number): AttrView | null };
  }

  getAttribute(name: string): string | null {
    return this.nodeType === ELEMENT ? ((this.raw as Element).attribs[name] ?? null) : null;
  }

  /** @internal Where the node sits in document order. */
  orderKey(): number {
    return this.dv.position(this.raw);
  }

  compareDocumentPosition(other: DomNode): number {
    return comparePositions(this, other as ViewNode | AttrView);
  }
}

/** Document order from the view's index: 2 (PRECEDING) when `b` comes before `a`, 4 (FOLLOWING) when after. */
function comparePositions(a: ViewNode | AttrView, b: ViewNode | AttrView): number {
  const ka = a.orderKey();
  const kb = b.orderKey();
  return kb < ka ? 2 : kb > ka ? 4 : 0;
}

class DocView extends ViewNode {
  /** The library reads an HTML document as case-insensitive when asked through `isHtml`; this answers the older probe alike. */
  readonly implementation = { hasFeature: () => true };

  get documentElement(): ViewNode | null {
    for (const c of this.childNodes) if (c.nodeType === ELEMENT) return c;
    return null;
  }
}

class AttrView implements DomNode {
  readonly nodeType = ATTRIBUTE;
  readonly namespaceURI = null;
  readonly prefix = null;
  readonly parentNode = null;
  readonly firstChild = null;
  readonly nextSibling = null;
  readonly previousSibling = null;
  readonly childNodes = [];

  constructor(
    readonly owner: ViewNode,
    readonly name: string,
    readonly index: number,
  ) {}

  get nodeName(): string {
    return this.name;
  }
  get localName(): string {
    return this.name;
  }
  get ownerElement(): ViewNode {
    return this.owner;
  }
  get value(): string {
    return (this.owner.raw as Element).attribs[this.name] ?? '';
  }
  get nodeValue(): string {
    return this.value;
  }
  get ownerDocument(): DomNode | null {
    return this.owner.ownerDocument;
  }
  /** An attribute sorts after its element and before the element's children, in the order written. */
  orderKey(): number {
    return this.owner.orderKey() + (this.index + 1) / (this.owner.attributes.length + 1);
  }
  compareDocumentPosition(other: DomNode): number {
    return comparePositions(this, other as ViewNode | AttrView);
  }
}
