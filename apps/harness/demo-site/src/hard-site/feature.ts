/**
 * What a feature module of the hard site is, apart from the site that registers the features
 * (index.ts): each feature imports this contract, and the site imports the features.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** What every feature module sees besides the request. */
export interface HardSiteContext {
  /** `http://host:port` of the site. */
  readonly origin: string;
  /** HardSiteOptions.membersPageLimit (undefined: none). */
  readonly membersPageLimit?: number;
}

export interface HardSiteFeature {
  /** Paths under this prefix (`/login/`) are the module's; the home page links to `entry`. */
  readonly prefix: string;
  /** The page a crawl starts from for this feature, a path under `prefix`. */
  readonly entry: string;
  /** Answers a request under `prefix`. */
  handle(req: IncomingMessage, res: ServerResponse, url: URL, ctx: HardSiteContext): void | Promise<void>;
}
