/** Deterministic fake job listings: the same id always gives the same listing, run after run. */
export interface Listing {
  readonly id: number;
  readonly title: string;
  readonly company: string;
  readonly location: string;
  readonly salary: string;
  readonly summary: string;
  readonly posted: string;
}

const ROLES = ['Rust engineer', 'Kafka operator', 'TypeScript developer', 'Site reliability engineer', 'Data engineer', 'Platform engineer', 'Backend developer', 'Search engineer', 'Frontend developer', 'Database administrator', 'Security engineer', 'ML engineer'];
const LEVELS = ['Junior', 'Senior', 'Staff', 'Lead', 'Principal'];
const COMPANIES = ['Acme Streams', 'Northwind Data', 'Globex Logistics', 'Initech Cloud', 'Umbrella Analytics', 'Hooli Search', 'Vandelay Imports', 'Stark Grid'];
const CITIES = ['Berlin', 'Paris', 'Lisbon', 'Amsterdam', 'Remote', 'London', 'Madrid', 'Vienna'];
const WORDS = 'build operate scale observe stream index ship design review migrate automate secure partition replicate measure tune'.split(' ');

export function listing(id: number): Listing {
  const pick = <T>(list: readonly T[], salt: number): T => list[(id * 7919 + salt * 104729) % list.length]!;
  const words = Array.from({ length: 40 }, (_, i) => pick(WORDS, i + 3));
  return {
    id,
    title: `${pick(LEVELS, 1)} ${pick(ROLES, 2)}`,
    company: pick(COMPANIES, 3),
    location: pick(CITIES, 4),
    salary: `€${50 + ((id * 37) % 70)}k`,
    summary: `We ${words.join(' ')}.`,
    posted: new Date(Date.UTC(2026, 0, 1 + (id % 300))).toISOString().slice(0, 10),
  };
}
