/**
 * The choices one explored run makes, and the order in which runs are tried. A run is fixed by the
 * choice it takes at each choice point (an approval asked, bodies waiting to finish, a log append
 * that may be the last before a crash…): option 0 is the ordinary one (approve, run the body, keep
 * going), any other option is a *deviation*. Runs are tried in order of how many deviations they
 * take (0, then 1, then 2, …: a failure is found first on a path with as few deviations as it
 * needs), each level in the order of its choice points; past `maxDeviations`, or once the level
 * would exceed the run budget, paths are drawn at random from the seed. Pure.
 */

/** One option of a choice point, as a person reads it (`c2 write: approval denied`). */
export interface ChoiceOption {
  readonly label: string;
}

/** A choice point met during a run, and the option taken there. */
export interface ChoiceRecord {
  /** What was being decided: `approval`, `body`, `append`, `cancel`. */
  readonly kind: string;
  readonly options: readonly ChoiceOption[];
  readonly taken: number;
}

/** Picks the options of one run: the given prefix, then option 0 (or random ones when sampling). */
export class Chooser {
  readonly made: ChoiceRecord[] = [];
  constructor(
    private readonly prefix: readonly number[],
    private readonly random?: () => number,
    /** How likely a sampled choice point deviates. */
    private readonly deviateRate = 0.25,
  ) {}

  choose(kind: string, options: readonly ChoiceOption[]): number {
    if (options.length === 0) throw new Error('explore: a choice point with no option');
    const at = this.made.length;
    let taken = 0;
    if (at < this.prefix.length) taken = Math.min(this.prefix[at]!, options.length - 1);
    else if (this.random && options.length > 1 && this.random() < this.deviateRate) taken = 1 + Math.floor(this.random() * (options.length - 1));
    this.made.push({ kind, options, taken });
    return taken;
  }

  /** The choices taken, as a replayable path. */
  path(): number[] {
    return this.made.map((c) => c.taken);
  }
}

/** Deviations of a path: its non-zero choices. */
export const deviationsOf = (path: readonly number[]): number => path.filter((c) => c !== 0).length;

/** The path without its trailing default choices (the same run). */
export function trimmed(path: readonly number[]): number[] {
  let end = path.length;
  while (end > 0 && path[end - 1] === 0) end--;
  return path.slice(0, end);
}

/**
 * The paths one deviation beyond a run: at each choice point after the run's last deviation, each
 * other option (so every path is produced once, by its one parent).
 */
export function childrenOf(made: readonly ChoiceRecord[]): number[][] {
  const path = made.map((c) => c.taken);
  let last = -1;
  for (let i = 0; i < path.length; i++) if (path[i] !== 0) last = i;
  const out: number[][] = [];
  for (let i = last + 1; i < made.length; i++) {
    for (let option = 1; option < made[i]!.options.length; option++) out.push([...path.slice(0, i), option]);
  }
  return out;
}

/** A small seeded generator (mulberry32): the same seed, the same sampled paths. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
