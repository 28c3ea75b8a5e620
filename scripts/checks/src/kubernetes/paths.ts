/** Where the Kubernetes deployment lives: its Kustomize base, its overlays and the vendored CRDs. */
import { join } from 'node:path';
import { REPO_ROOT } from '../import-layers.js';

export const KUBERNETES_DIR = join(REPO_ROOT, 'deploy', 'kubernetes');
export const BASE_DIR = join(KUBERNETES_DIR, 'base');
export const OVERLAYS_DIR = join(KUBERNETES_DIR, 'overlays');
export const CRDS_DIR = join(KUBERNETES_DIR, 'crds');
/** The generated KafkaTopic resources. */
export const TOPICS_FILE = join(BASE_DIR, 'kafka', 'topics.yaml');
/** The ConfigMap whose partition settings the topics are generated with. */
export const CONFIG_FILE = join(BASE_DIR, 'config.yaml');
