/**
 * `npm run kubernetes -w @trawl/checks [-- --write]`, a step of `npm run lint`: renders the
 * Kustomize base and overlays of deploy/kubernetes, validates every resource offline (Kubernetes'
 * kinds with kubernetes-models, Strimzi's and CloudNativePG's with their CRD schemas) and the
 * deployment's rules (src/kubernetes/policy.ts). `--write` first regenerates the KafkaTopic
 * resources from the topic catalogue.
 */
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { REPO_ROOT } from './import-layers.js';
import { checkKubernetes } from './kubernetes/check.ts';
import { renderKafkaTopics } from './kubernetes/kafka-topics.ts';
import { TOPICS_FILE } from './kubernetes/paths.ts';

if (process.argv.includes('--write')) {
  writeFileSync(TOPICS_FILE, renderKafkaTopics());
  process.stdout.write(`wrote ${relative(REPO_ROOT, TOPICS_FILE)}\n`);
}
const { reports, topics } = checkKubernetes();
let failed = false;
if (topics) {
  failed = true;
  process.stderr.write(`kubernetes: ${topics}\n`);
}
for (const report of reports) {
  if (report.errors.length === 0) continue;
  failed = true;
  process.stderr.write(`kubernetes: ${report.dir}:\n${report.errors.map((e) => `  ${e}\n`).join('')}`);
}
if (failed) process.exit(1);
process.stdout.write(`kubernetes: ${reports.map((r) => `${r.dir} (${r.resources} resources)`).join(', ')} valid\n`);
