export { FORMAT_MEDIA_TYPES, isContentFormat, type ContentFormat } from './formats.ts';
export { contentHash } from './content-key.ts';
export { contentStoreConfig } from './content-config.ts';
export { ContentStore } from './content-store.ts';
export { storePageContent, type PageContent } from './page-content.ts';
export { ContentNotFoundError } from './errors.ts';
