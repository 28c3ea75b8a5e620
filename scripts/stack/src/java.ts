/** The system Java that runs Kafka and the registry (Java 17, Debian's openjdk-17-jre-headless). */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MissingDependencyError } from './errors.ts';
import type { PartName } from './part.ts';
import { run } from './process.ts';

/** `$JAVA_HOME/bin/java` when JAVA_HOME is set, else `java` from PATH. */
export function javaCommand(env: NodeJS.ProcessEnv): string {
  return env.JAVA_HOME ? join(env.JAVA_HOME, 'bin', 'java') : 'java';
}

let checked: Promise<number> | undefined;

/** The Java feature version (17, 21…); throws, naming the part that needs it, when there is none. */
export async function requireJava(part: PartName, env: NodeJS.ProcessEnv): Promise<number> {
  checked ??= run(javaCommand(env), ['-version'], { timeoutMs: 20_000 }).then((r) => {
    const m = /version "(\d+)(?:\.(\d+))?/.exec(r.output);
    if (r.code !== 0 || !m?.[1]) return 0;
    // Java 8 and older report "1.8.0_…".
    return m[1] === '1' ? Number(m[2]) : Number(m[1]);
  });
  const version = await checked;
  if (version < 17) {
    throw new MissingDependencyError(
      part,
      version === 0 ? `no Java found (${javaCommand(env)})` : `Java ${version} found, Java 17 or newer is needed`,
      'run `npm run setup` (installs openjdk-17-jre-headless) or set JAVA_HOME to a Java 17+',
    );
  }
  return version;
}

/** The broker's classpath that `scripts/setup` resolved with Maven (infra/kafka/target/kafka.classpath). */
export function kafkaClasspath(repoRoot: string): string {
  const file = join(repoRoot, 'infra', 'kafka', 'target', 'kafka.classpath');
  const hint = 'run `npm run setup` (resolves the broker from Maven Central with infra/kafka/pom.xml)';
  if (!existsSync(file)) throw new MissingDependencyError('kafka', `${file} is missing`, hint);
  const cp = readFileSync(file, 'utf8').trim();
  const missing = cp.split(':').filter((jar) => !existsSync(jar));
  if (!cp || missing.length > 0) {
    throw new MissingDependencyError('kafka', `the broker's classpath names ${missing.length} jar(s) that are gone, e.g. ${missing[0] ?? '(empty classpath)'}`, hint);
  }
  return cp;
}

/**
 * `-XX:SharedArchiveFile=…` when `scripts/setup` trained a class-data archive for this JVM
 * (infra/kafka/target/cds/<name>.jsa), else nothing. It cuts the registry's start from ~6 s to
 * ~2.5 s and the broker's start-up CPU by ~40%; a stale archive is ignored by the JVM.
 */
export function classDataArgs(repoRoot: string, name: 'kafka' | 'registry'): string[] {
  const archive = join(repoRoot, 'infra', 'kafka', 'target', 'cds', `${name}.jsa`);
  return existsSync(archive) ? [`-XX:SharedArchiveFile=${archive}`] : [];
}
