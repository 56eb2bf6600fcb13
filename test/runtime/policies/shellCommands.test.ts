/**
 * `parseShellCommand` (shellCommands.ts, SPEC §10.4, docs/command-rules.md), pinned command by
 * command: for a line, which simple commands it runs and what each one finally runs through its
 * wrappers (the chain of layers), which words are known before it runs (`literal`), which get more
 * arguments at run time (`moreArgs`), which only run a string parsed in turn (`delegates`), the
 * key an approval is stored under (`exact`), and what the parse says it cannot see (`opaque`).
 *
 * The expectations come from bash and the wrappers' own option syntax (their man pages): `nice -n
 * 5 rm -r v` runs `rm -r v`, `timeout --signal KILL 5 rm` runs `rm`, `$'\x41'` is `A`, an unknown
 * wrapper option leaves the command's start unknown. Each wrapper option the module lists is
 * tried once, so a wrapper that stops knowing an option is seen (an opaque line is asked about
 * instead of being allowed by a rule).
 */
import { describe, expect, it } from 'vitest';
import { MAX_PARSED_COMMAND_LENGTH, parseShellCommand } from '../../../src/runtime/policies/shellCommands.js';

/** Each simple command as its chain: the words of each layer joined by single spaces. */
const chains = (line: string) => parseShellCommand(line).commands.map((c) => c.layers.map((l) => l.words.join(' ')));
/** What each simple command finally runs (its last layer), words as an array. */
const finals = (line: string) => parseShellCommand(line).commands.map((c) => c.layers[c.layers.length - 1]!.words);
const opaque = (line: string) => parseShellCommand(line).opaque.join('\n');

/** A line whose parse sees everything, and its chains. */
function seen(line: string) {
  const parse = parseShellCommand(line);
  expect(parse.parsed, line).toBe(true);
  expect(parse.opaque, line).toEqual([]);
  return parse.commands.map((c) => c.layers.map((l) => l.words.join(' ')));
}

describe('wrappers are looked through with their options (each option the parse knows)', () => {
  // [line, what it finally runs]: every line here is fully seen (no opaque reason).
  it.each([
    // env: -u NAME, -C DIR, -i, -0, -v, NAME=value, --
    ['env rm -r v', 'rm -r v'],
    ['env -u HOME rm -r v', 'rm -r v'],
    ['env -uHOME rm -r v', 'rm -r v'],
    ['env -C /tmp rm -r v', 'rm -r v'],
    ['env -i rm -r v', 'rm -r v'],
    ['env -0 rm -r v', 'rm -r v'],
    ['env -v rm -r v', 'rm -r v'],
    ['env -iv -u HOME rm -r v', 'rm -r v'],
    ['env --unset=HOME rm -r v', 'rm -r v'],
    ['env --unset HOME rm -r v', 'rm -r v'],
    ['env --chdir=/tmp rm -r v', 'rm -r v'],
    ['env --chdir /tmp rm -r v', 'rm -r v'],
    ['env --ignore-environment rm -r v', 'rm -r v'],
    ['env --null rm -r v', 'rm -r v'],
    ['env --debug rm -r v', 'rm -r v'],
    ['env --default-signal rm -r v', 'rm -r v'],
    ['env --default-signal=INT rm -r v', 'rm -r v'],
    ['env --ignore-signal=INT rm -r v', 'rm -r v'],
    ['env --block-signal=INT rm -r v', 'rm -r v'],
    ['env --list-signal-handling rm -r v', 'rm -r v'],
    ['env A=1 B=2 rm -r v', 'rm -r v'],
    ['env _a9=1 rm -r v', 'rm -r v'],
    ['env -- rm -r v', 'rm -r v'],
    ['env -i -- A=1 rm -r v', 'A=1 rm -r v'],
    // nice: -n N, -nN, -N, --adjustment
    ['nice rm -r v', 'rm -r v'],
    ['nice -n 5 rm -r v', 'rm -r v'],
    ['nice -n5 rm -r v', 'rm -r v'],
    ['nice -n -5 rm -r v', 'rm -r v'],
    ['nice -5 rm -r v', 'rm -r v'],
    ['nice -19 rm -r v', 'rm -r v'],
    ['nice --adjustment=5 rm -r v', 'rm -r v'],
    ['nice --adjustment 5 rm -r v', 'rm -r v'],
    ['nohup rm -r v', 'rm -r v'],
    // the time program: -f FMT, -o FILE, -a -p -q -v, the long forms
    ['/usr/bin/time rm -r v', 'rm -r v'],
    ['/usr/bin/time -f %e rm -r v', 'rm -r v'],
    ['/usr/bin/time -o t.txt rm -r v', 'rm -r v'],
    ['/usr/bin/time -a -o t.txt rm -r v', 'rm -r v'],
    ['/usr/bin/time -p rm -r v', 'rm -r v'],
    ['/usr/bin/time -q rm -r v', 'rm -r v'],
    ['/usr/bin/time -v rm -r v', 'rm -r v'],
    ['/usr/bin/time --format=%e rm -r v', 'rm -r v'],
    ['/usr/bin/time --format %e rm -r v', 'rm -r v'],
    ['/usr/bin/time --output=t.txt rm -r v', 'rm -r v'],
    ['/usr/bin/time --append --output t.txt rm -r v', 'rm -r v'],
    ['/usr/bin/time --portability rm -r v', 'rm -r v'],
    ['/usr/bin/time --quiet rm -r v', 'rm -r v'],
    ['/usr/bin/time --verbose rm -r v', 'rm -r v'],
    // timeout: the duration, -s SIG, -k DUR, -v, the long forms
    ['timeout 5 rm -r v', 'rm -r v'],
    ['timeout -s KILL 5 rm -r v', 'rm -r v'],
    ['timeout -sKILL 5 rm -r v', 'rm -r v'],
    ['timeout -k 1 5 rm -r v', 'rm -r v'],
    ['timeout -v 5 rm -r v', 'rm -r v'],
    ['timeout --signal=KILL 5 rm -r v', 'rm -r v'],
    ['timeout --signal KILL 5 rm -r v', 'rm -r v'],
    ['timeout --kill-after=1 5 rm -r v', 'rm -r v'],
    ['timeout --kill-after 1 5 rm -r v', 'rm -r v'],
    ['timeout --preserve-status 5 rm -r v', 'rm -r v'],
    ['timeout --foreground 5 rm -r v', 'rm -r v'],
    ['timeout --verbose 5 rm -r v', 'rm -r v'],
    // setsid, stdbuf
    ['setsid rm -r v', 'rm -r v'],
    ['setsid -c rm -r v', 'rm -r v'],
    ['setsid -f rm -r v', 'rm -r v'],
    ['setsid -w rm -r v', 'rm -r v'],
    ['setsid --ctty rm -r v', 'rm -r v'],
    ['setsid --fork rm -r v', 'rm -r v'],
    ['setsid --wait rm -r v', 'rm -r v'],
    ['stdbuf -i0 rm -r v', 'rm -r v'],
    ['stdbuf -o L rm -r v', 'rm -r v'],
    ['stdbuf -e 0 rm -r v', 'rm -r v'],
    ['stdbuf --input=0 rm -r v', 'rm -r v'],
    ['stdbuf --output L rm -r v', 'rm -r v'],
    ['stdbuf --error=0 rm -r v', 'rm -r v'],
    // sudo: options with a value, flags, NAME=value; doas
    ['sudo rm -r v', 'rm -r v'],
    ['sudo -u root rm -r v', 'rm -r v'],
    ['sudo -uroot rm -r v', 'rm -r v'],
    ['sudo -g wheel rm -r v', 'rm -r v'],
    ['sudo -C 3 rm -r v', 'rm -r v'],
    ['sudo -D /tmp rm -r v', 'rm -r v'],
    ['sudo -p pw: rm -r v', 'rm -r v'],
    ['sudo -r role rm -r v', 'rm -r v'],
    ['sudo -t type rm -r v', 'rm -r v'],
    ['sudo -T 5 rm -r v', 'rm -r v'],
    ['sudo -U bob -l rm -r v', 'rm -r v'],
    ['sudo -R /srv rm -r v', 'rm -r v'],
    ['sudo -A -b -E -H -K -k -n -P -S -B rm -r v', 'rm -r v'],
    ['sudo -iHs rm -r v', 'rm -r v'],
    ['sudo -E A=1 rm -r v', 'rm -r v'],
    ['sudo --user=root rm -r v', 'rm -r v'],
    ['sudo --user root rm -r v', 'rm -r v'],
    ['sudo --group=wheel rm -r v', 'rm -r v'],
    ['sudo --close-from=3 rm -r v', 'rm -r v'],
    ['sudo --chdir=/tmp rm -r v', 'rm -r v'],
    ['sudo --host=h rm -r v', 'rm -r v'],
    ['sudo --prompt=pw rm -r v', 'rm -r v'],
    ['sudo --role=r rm -r v', 'rm -r v'],
    ['sudo --type=t rm -r v', 'rm -r v'],
    ['sudo --command-timeout=5 rm -r v', 'rm -r v'],
    ['sudo --other-user=bob rm -r v', 'rm -r v'],
    ['sudo --chroot=/srv rm -r v', 'rm -r v'],
    ['sudo --askpass rm -r v', 'rm -r v'],
    ['sudo --background rm -r v', 'rm -r v'],
    ['sudo --preserve-env rm -r v', 'rm -r v'],
    ['sudo --preserve-env=PATH rm -r v', 'rm -r v'],
    ['sudo --set-home rm -r v', 'rm -r v'],
    ['sudo --login rm -r v', 'rm -r v'],
    ['sudo --remove-timestamp rm -r v', 'rm -r v'],
    ['sudo --reset-timestamp rm -r v', 'rm -r v'],
    ['sudo --list rm -r v', 'rm -r v'],
    ['sudo --non-interactive rm -r v', 'rm -r v'],
    ['sudo --preserve-groups rm -r v', 'rm -r v'],
    ['sudo --stdin rm -r v', 'rm -r v'],
    ['sudo --shell rm -r v', 'rm -r v'],
    ['sudo --version rm -r v', 'rm -r v'],
    ['sudo --validate rm -r v', 'rm -r v'],
    ['sudo --bell rm -r v', 'rm -r v'],
    ['sudo --help rm -r v', 'rm -r v'],
    ['doas rm -r v', 'rm -r v'],
    ['doas -u root rm -r v', 'rm -r v'],
    ['doas -C /etc/doas.conf rm -r v', 'rm -r v'],
    ['doas -n -s rm -r v', 'rm -r v'],
    ['doas -L rm -r v', 'rm -r v'],
    // command, builtin, exec
    ['command rm -r v', 'rm -r v'],
    ['command -p rm -r v', 'rm -r v'],
    ['command -v rm -r v', 'rm -r v'],
    ['command -V rm -r v', 'rm -r v'],
    ['builtin echo x', 'echo x'],
    ['exec rm -r v', 'rm -r v'],
    ['exec -a name rm -r v', 'rm -r v'],
    ['exec -aname rm -r v', 'rm -r v'],
    ['exec -c -l rm -r v', 'rm -r v'],
    ['exec -cl rm -r v', 'rm -r v'],
    // ionice, taskset, busybox
    ['ionice -c 3 rm -r v', 'rm -r v'],
    ['ionice -c3 -n 7 rm -r v', 'rm -r v'],
    ['ionice -t -c 3 rm -r v', 'rm -r v'],
    ['ionice --class=3 rm -r v', 'rm -r v'],
    ['ionice --class 3 --classdata 7 rm -r v', 'rm -r v'],
    ['ionice --ignore -c 3 rm -r v', 'rm -r v'],
    ['taskset 0x1 rm -r v', 'rm -r v'],
    ['taskset -c 0,1 rm -r v', 'rm -r v'],
    ['taskset -a 0x1 rm -r v', 'rm -r v'],
    ['taskset --all-tasks 0x1 rm -r v', 'rm -r v'],
    ['taskset --cpu-list 0 rm -r v', 'rm -r v'],
    ['busybox rm -r v', 'rm -r v'],
    // wrappers inside wrappers, and a wrapper's directory dropped
    ['nice -n 5 timeout 5 env A=1 stdbuf -o0 rm -r v', 'rm -r v'],
    ['/usr/bin/env -i /usr/bin/nice rm -r v', 'rm -r v'],
  ])('%j runs %j', (line, runs) => {
    const c = seen(line);
    expect(c).toHaveLength(1);
    expect(c[0]![0]).toBe(line);
    expect(c[0]![c[0]!.length - 1]).toBe(runs);
  });

  it('each wrapper is a layer of its own, in order, down to the command that finally runs', () => {
    expect(seen('nice -n 5 timeout 5 env A=1 stdbuf -o0 rm -r v')).toEqual([
      ['nice -n 5 timeout 5 env A=1 stdbuf -o0 rm -r v', 'timeout 5 env A=1 stdbuf -o0 rm -r v', 'env A=1 stdbuf -o0 rm -r v', 'stdbuf -o0 rm -r v', 'rm -r v'],
    ]);
    expect(seen('sudo -u root nohup rm -r v')).toEqual([['sudo -u root nohup rm -r v', 'nohup rm -r v', 'rm -r v']]);
  });

  it.each([
    ['env', ['env']],
    ['env -i A=1', ['env -i A=1']],
    ['nice -n 5', ['nice -n 5']],
    ['nohup', ['nohup']],
    ['timeout 5', ['timeout 5']],
    ['sudo -u root', ['sudo -u root']],
    ['env --', ['env --']],
  ])('a wrapper given no command (%j) runs nothing further', (line, chain) => {
    expect(seen(line)).toEqual([chain]);
  });

  it('env and sudo take every word holding = as an assignment, whatever its name; the first word without one is the command', () => {
    expect(seen('env 1A=2 ./x=y rm -r v')).toEqual([['env 1A=2 ./x=y rm -r v', 'rm -r v']]);
    expect(seen('sudo 1A=2 rm -r v')).toEqual([['sudo 1A=2 rm -r v', 'rm -r v']]);
  });

  it('an exported function in env or sudo is opaque (bash imports BASH_FUNC_name%% as a function: `ls` would run its body)', () => {
    const attack = "env 'BASH_FUNC_ls%%=() { rm -r v; }' bash -c ls";
    expect(parseShellCommand(attack).opaque).toContain('it sets BASH_FUNC_ls%%, which changes what commands run');
    expect(parseShellCommand("sudo 'BASH_FUNC_ls%%=() { rm -r v; }' bash -c ls").opaque).toContain('it sets BASH_FUNC_ls%%, which changes what commands run');
  });

  it('only nice reads -N as an option; for another wrapper a number after - is an unknown option', () => {
    expect(seen('nice -10 rm -r v')[0]).toEqual(['nice -10 rm -r v', 'rm -r v']);
    expect(opaque('nohup -5 rm -r v')).toMatch(/`nohup` has an option the parse does not know \("-5"\)/);
    expect(opaque('nice -5x rm -r v')).toMatch(/`nice` has an option the parse does not know \("-5x"\)/);
    expect(opaque('nice -a-5 rm -r v')).toMatch(/`nice` has an option the parse does not know \("-a-5"\)/);
    // A value option ends the cluster: the rest of the word is its value.
    expect(seen('nice -n-5 rm -r v')[0]).toEqual(['nice -n-5 rm -r v', 'rm -r v']);
  });

  it('a lone - is a word, not an option: the command', () => {
    expect(seen('nice - x')).toEqual([['nice - x', '- x']]);
  });
});

describe('options after which no command runs', () => {
  it.each(['sudo -e /etc/hosts', 'sudo --edit /etc/hosts', 'sudo -u root -e /etc/hosts', 'ionice -p 123', 'ionice -c 3 -p 123 456', 'ionice -P 1', 'ionice -u 1000', 'ionice --pid=1', 'ionice --pid=1 2 3', 'ionice --uid=1000 rm -r v', 'ionice --pgid 1', 'ionice --uid=1000', 'taskset -p 0x1 123', 'taskset --pid 0x1 123'])(
    '%j runs no command of its arguments',
    (line) => {
      expect(seen(line)).toEqual([[line]]);
    },
  );
});

describe('xargs runs its command with more arguments at run time', () => {
  it.each([
    ['xargs rm -r', 'rm -r'],
    ['xargs -a list rm -r', 'rm -r'],
    ['xargs -d , rm -r', 'rm -r'],
    ['xargs -E eof rm -r', 'rm -r'],
    ['xargs -I {} rm -r {}', 'rm -r {}'],
    ['xargs -I{} rm -r {}', 'rm -r {}'],
    ['xargs -L 1 rm -r', 'rm -r'],
    ['xargs -n 1 rm -r', 'rm -r'],
    ['xargs -P 4 rm -r', 'rm -r'],
    ['xargs -s 100 rm -r', 'rm -r'],
    ['xargs -i rm -r {}', 'rm -r {}'],
    ['xargs -iX rm -r X', 'rm -r X'],
    ['xargs -e rm -r', 'rm -r'],
    ['xargs -eEND rm -r', 'rm -r'],
    ['xargs -l rm -r', 'rm -r'],
    ['xargs -l2 rm -r', 'rm -r'],
    ['xargs -0i rm -r {}', 'rm -r {}'],
    ['xargs -0 -p -r -t -x -o rm -r', 'rm -r'],
    ['xargs -0prtxo rm -r', 'rm -r'],
    ['xargs --arg-file=list rm -r', 'rm -r'],
    ['xargs --arg-file list rm -r', 'rm -r'],
    ['xargs --delimiter=, rm -r', 'rm -r'],
    ['xargs --max-args=1 rm -r', 'rm -r'],
    ['xargs --max-procs 4 rm -r', 'rm -r'],
    ['xargs --max-chars=100 rm -r', 'rm -r'],
    ['xargs --process-slot-var=S rm -r', 'rm -r'],
    ['xargs --null rm -r', 'rm -r'],
    ['xargs --no-run-if-empty rm -r', 'rm -r'],
    ['xargs --interactive rm -r', 'rm -r'],
    ['xargs --verbose rm -r', 'rm -r'],
    ['xargs --exit rm -r', 'rm -r'],
    ['xargs --open-tty rm -r', 'rm -r'],
    ['xargs --show-limits rm -r', 'rm -r'],
    ['xargs --eof=END rm -r', 'rm -r'],
    ['xargs --replace rm -r {}', 'rm -r {}'],
    ['xargs --max-lines=1 rm -r', 'rm -r'],
  ])('%j runs %j with more arguments', (line, runs) => {
    const parse = parseShellCommand(line);
    expect(parse.opaque).toEqual([]);
    expect(parse.commands).toHaveLength(1);
    const [head, last] = parse.commands[0]!.layers;
    expect(head).toEqual({ words: line.split(' '), literal: true, moreArgs: false });
    expect(last).toMatchObject({ words: runs.split(' '), moreArgs: true });
  });

  it.each([
    ['xargs -I {} rm -r {}', ['rm', '-r', '{}'], false],
    ['xargs -I{} rm -r {}', ['rm', '-r', '{}'], false],
    ['xargs -I X rm -r X/y', ['rm', '-r', 'X/y'], false],
    ['xargs -IX rm -r X', ['rm', '-r', 'X'], false],
    ['xargs -i rm -r {}', ['rm', '-r', '{}'], false],
    ['xargs -0i rm -r {}', ['rm', '-r', '{}'], false],
    ['xargs -iX rm -r X', ['rm', '-r', 'X'], false],
    ['xargs -iX rm -r {}', ['rm', '-r', '{}'], true],
    ['xargs --replace rm -r {}', ['rm', '-r', '{}'], false],
    ['xargs --replace=X rm -r X', ['rm', '-r', 'X'], false],
    ['xargs --replace=X rm -r {}', ['rm', '-r', '{}'], true],
    ['xargs rm -r {}', ['rm', '-r', '{}'], true],
    ['xargs --replace rm -r x', ['rm', '-r', 'x'], true],
    ['xargs -i rm -r x', ['rm', '-r', 'x'], true],
    ['xargs -I X rm -r y', ['rm', '-r', 'y'], true],
    ['xargs -e rm -r {}', ['rm', '-r', '{}'], true],
    ['xargs -n 1 rm -r {}', ['rm', '-r', '{}'], true],
    ['xargs --null rm -r {}', ['rm', '-r', '{}'], true],
    ['xargs rm -r undefined', ['rm', '-r', 'undefined'], true],
    ['xargs -n 1 -s 100 -L 1 -P 2 rm -r 1 100', ['rm', '-r', '1', '100'], true],
  ])('%j: a word holding the replace string is known only at run time', (line, words, literal) => {
    const layers = parseShellCommand(line).commands[0]!.layers;
    expect(layers[layers.length - 1]).toEqual({ words, literal, moreArgs: true });
  });

  it('the replace string as the command name, or in a -c string, is opaque', () => {
    expect(opaque('xargs -I{} {} -r v')).toBe('the command name "{}" is built at run time');
    expect(opaque("xargs -I R sh -c 'echo R'")).toBe('`sh -c` runs a command string built at run time');
    expect(opaque("xargs -i sh -c '{}'")).toBe('`sh -c` runs a command string built at run time');
    expect(opaque("xargs --replace=R bash -c 'R'")).toBe('`bash -c` runs a command string built at run time');
    // A replace string built at run time may be anything: every word may hold it.
    expect(opaque("r={}; xargs -I \"$r\" sh -c '{}'")).toBe('the command name "sh" is built at run time');
    expect(parseShellCommand('xargs -I "$r" rm -r x').commands[0]!.layers[1]).toEqual({ words: ['rm', '-r', 'x'], literal: false, moreArgs: true });
  });

  it('a shell -c given its string as one of the arguments at run time is opaque: `xargs sh -c` runs its input', () => {
    expect(opaque('xargs -0 sh -c')).toBe('`sh -c` runs a command string given at run time');
    expect(opaque('find . -name "*.sh" -exec bash -c +')).toBe('`bash -c` runs a command string given at run time');
    // Its own string given, the arguments at run time are only its $0, $1…
    expect(parseShellCommand("xargs sh -c 'rm -r \"$@\"' sh").opaque).toEqual([]);
  });

  it('xargs -I with no replace string and no command runs echo', () => {
    expect(seen('xargs -I')).toEqual([['xargs -I', 'echo']]);
  });

  it('xargs with no command runs echo, with more arguments', () => {
    const parse = parseShellCommand('xargs -0');
    expect(parse.opaque).toEqual([]);
    expect(parse.commands[0]!.layers).toEqual([
      { words: ['xargs', '-0'], literal: true, moreArgs: false },
      { words: ['echo'], literal: true, moreArgs: true },
    ]);
  });

  it('a wrapper under xargs also gets the arguments: the command at the end of the chain has more arguments', () => {
    const parse = parseShellCommand('xargs nice -n 5 rm');
    expect(parse.commands[0]!.layers.map((l) => [l.words.join(' '), l.moreArgs])).toEqual([
      ['xargs nice -n 5 rm', false],
      ['nice -n 5 rm', true],
      ['rm', true],
    ]);
  });

  it('a wrapper that adds no arguments leaves the command with its words only', () => {
    expect(parseShellCommand('nice rm -r v').commands[0]!.layers.map((l) => l.moreArgs)).toEqual([false, false]);
  });
});

describe('find runs each -exec / -execdir / -ok / -okdir command', () => {
  it.each([
    ["find . -exec rm -r {} ';'", ['rm -r {}']],
    ['find . -exec rm -r {} \\;', ['rm -r {}']],
    ['find . -exec rm -r {} +', ['rm -r {}']],
    ['find . -execdir rm -r {} +', ['rm -r {}']],
    ['find . -ok rm -r {} \\;', ['rm -r {}']],
    ['find . -okdir rm -r {} \\;', ['rm -r {}']],
    ['find . -name x -exec rm {} \\; -exec ls {} \\; -print', ['rm {}', 'ls {}']],
    ['find . -exec rm -r {}', ['rm -r {}']],
    ['find . -exec \\; -exec ls +', ['ls']],
    ['find . -name x -print', []],
    ['find . -name -exec', []],
  ])('%j runs %j', (line, runs) => {
    const parse = parseShellCommand(line);
    expect(parse.opaque).toEqual([]);
    expect(parse.commands.map((c) => c.layers.slice(1).map((l) => l.words.join(' ')))).toEqual(runs.length === 0 ? [[]] : runs.map((r) => [r]));
    for (const c of parse.commands) for (const l of c.layers.slice(1)) expect(l.moreArgs).toBe(true);
  });

  it('{} is replaced by each file name: a word holding it is known only at run time', () => {
    expect(parseShellCommand('find . -exec rm -r {} ./{}.bak x +').commands[0]!.layers[1]).toEqual({ words: ['rm', '-r', '{}', './{}.bak', 'x'], literal: false, moreArgs: true });
    expect(parseShellCommand('find . -exec rm -r x +').commands[0]!.layers[1]).toEqual({ words: ['rm', '-r', 'x'], literal: true, moreArgs: true });
  });

  it('{} as the command, or as a -c string, is opaque: `find / -name rm -exec {} -r v ;` runs rm', () => {
    expect(opaque('find / -name rm -exec {} -r v \\;')).toBe('the command name "{}" is built at run time');
    expect(opaque('find . -exec sh -c {} \\;')).toBe('`sh -c` runs a command string built at run time');
  });

  it('a wrapper inside -exec is looked through', () => {
    expect(seen('find . -exec nice -n 5 rm {} +')).toEqual([['find . -exec nice -n 5 rm {} +', 'nice -n 5 rm {}', 'rm {}']]);
  });
});

describe('what a wrapper hides from the parse', () => {
  it('an option it does not know: opaque, and every later word that is not an option may be the command', () => {
    const parse = parseShellCommand('timeout --weird 5 rm -r v');
    expect(parse.opaque).toEqual(['`timeout` has an option the parse does not know ("--weird"): where its command starts is not certain']);
    expect(new Set(parse.commands.map((c) => c.layers.slice(1).map((l) => l.words.join(' ')).join(' / ')))).toEqual(new Set(['5 rm -r v', 'rm -r v', 'v']));
    expect(parseShellCommand('sudo -Z rm -r v').opaque).toEqual(['`sudo` has an option the parse does not know ("-Z"): where its command starts is not certain']);
    expect(new Set(finals('sudo -Z rm -r v').map((w) => w.join(' ')))).toEqual(new Set(['rm -r v', 'v']));
  });

  it('the words right after an unknown option are a candidate even when they start with -', () => {
    expect(finals('timeout --weird -x rm').map((w) => w.join(' '))).toContain('-x rm');
    expect(finals('nohup -q -x rm').map((w) => w.join(' '))).toContain('-x rm');
  });

  it('an unknown option as the last word leaves no candidate', () => {
    expect(chains('nohup --weird')).toEqual([['nohup --weird']]);
    expect(chains('nohup -q')).toEqual([['nohup -q']]);
  });

  it('an unknown long option is not a value option of another wrapper', () => {
    // --user belongs to sudo, not to timeout.
    expect(opaque('timeout --user root 5 rm')).toMatch(/`timeout` has an option the parse does not know \("--user"\)/);
  });

  it('the quoted option is cut to 40 characters', () => {
    const long = `--${'x'.repeat(60)}`;
    expect(opaque(`nohup ${long} rm`)).toBe(`\`nohup\` has an option the parse does not know (${JSON.stringify(long.slice(0, 40))}): where its command starts is not certain`);
    expect(opaque(`nohup -${'q'.repeat(60)} rm`)).toBe(`\`nohup\` has an option the parse does not know (${JSON.stringify(`-${'q'.repeat(39)}`)}): where its command starts is not certain`);
  });

  it('a word built at run time where its options or command are: opaque, and every later word may be the command', () => {
    const parse = parseShellCommand('nice $n rm -r v');
    expect(parse.opaque).toEqual(['`nice` is given a word built at run time ("$n"): where its command starts is not known']);
    expect(new Set(finals('nice $n rm -r v').map((w) => w.join(' ')))).toEqual(new Set(['rm -r v', 'v']));
    expect(parseShellCommand(`nice "$${'x'.repeat(100)}" rm`).opaque[0]).toBe(`\`nice\` is given a word built at run time (${JSON.stringify(`$${'x'.repeat(79)}`)}): where its command starts is not known`);
  });

  it('env -S: the split string is parsed as a command line, with the words after it', () => {
    expect(new Set(seen("env -S 'rm -r' v").map((c) => c.join(' / ')))).toEqual(new Set(['rm -r v', 'env -S rm -r v']));
    expect(finals("env -S'rm -r' v").map((w) => w.join(' '))).toContain('rm -r v');
    expect(finals("env --split-string='rm -r' v").map((w) => w.join(' '))).toContain('rm -r v');
    expect(finals("env --split-string 'rm -r' v").map((w) => w.join(' '))).toContain('rm -r v');
    // The words after the string are passed as they are: one word each, whatever they hold.
    expect(finals("env -S 'printf %s' 'a b;rm' c")).toContainEqual(['printf', '%s', 'a b;rm', 'c']);
    expect(finals("env -S 'echo' \"it's\"")).toContainEqual(['echo', "it's"]);
    expect(parseShellCommand("env -S 'rm -r v'").commands.find((c) => c.layers[0]!.words[0] === 'env')!.layers).toEqual([{ words: ['env', '-S', 'rm -r v'], literal: true, moreArgs: false, delegates: true }]);
  });

  it('env -S with no string runs nothing; with words built at run time after it, it is opaque', () => {
    expect(seen('env -S')).toEqual([['env -S']]);
    expect(parseShellCommand('env -S').commands[0]!.layers).toStrictEqual([{ words: ['env', '-S'], literal: true, moreArgs: false }]);
    expect(seen('env --split-string')).toEqual([['env --split-string']]);
    expect(opaque("env -S 'rm -r' \"$x\"")).toMatch(/`env -S` runs a command string built at run time/);
  });
});

describe('shells: -c strings are parsed in turn; a script or input is opaque', () => {
  it.each(['bash', 'sh', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'rbash', '/bin/bash', '/usr/bin/env bash'])('%s -c runs its string', (shell) => {
    const line = `${shell} -c 'rm -r v'`;
    const parse = parseShellCommand(line);
    expect(parse.opaque).toEqual([]);
    expect(finals(line)).toContainEqual(['rm', '-r', 'v']);
    const outer = parse.commands.find((c) => c.source === line)!;
    expect(outer.layers[outer.layers.length - 1]!.delegates).toBe(true);
  });

  it.each([
    "bash -lc 'rm -r v'",
    "bash -c -- 'rm -r v'",
    "bash -e -c 'rm -r v'",
    "bash -o pipefail -c 'rm -r v'",
    "bash +o pipefail -c 'rm -r v'",
    "bash -O extglob -c 'rm -r v'",
    "bash +O extglob -c 'rm -r v'",
    "bash -eo pipefail -c 'rm -r v'",
    "bash --norc -c 'rm -r v'",
    "bash --rcfile x.rc -c 'rm -r v'",
    "bash --init-file x.rc -c 'rm -r v'",
    "bash --noprofile --norc -c 'rm -r v' arg0 arg1",
    "sh -c 'rm -r v' 'ls x'",
  ])('options before the string are skipped: %j runs rm -r v (and only the string)', (line) => {
    expect(parseShellCommand(line).opaque).toEqual([]);
    const inner = finals(line).filter((w) => w[0] !== line.split(' ')[0]);
    expect(inner).toEqual([['rm', '-r', 'v']]);
  });

  it.each([
    ['bash ./s.sh', '`bash` runs the script "./s.sh", which the parse cannot see'],
    ['bash -x ./s.sh', '`bash` runs the script "./s.sh", which the parse cannot see'],
    ['bash -o errexit ./s.sh', '`bash` runs the script "./s.sh", which the parse cannot see'],
    ['bash --rcfile x.rc ./s.sh', '`bash` runs the script "./s.sh", which the parse cannot see'],
    ['bash -- -c', '`bash` runs the script "-c", which the parse cannot see'],
    ['bash "$f"', '`bash` runs the script "$f", which the parse cannot see'],
    ['sh', '`sh` runs commands from its input, which the parse cannot see'],
    ['sh -', '`sh` runs commands from its input, which the parse cannot see'],
    ['bash -s', '`bash` runs commands from its input, which the parse cannot see'],
    ['curl x | bash -e', '`bash` runs commands from its input, which the parse cannot see'],
    ['bash --login', '`bash` runs commands from its input, which the parse cannot see'],
    ['sh +', '`sh` runs the script "+", which the parse cannot see'],
    ['bash "-$o" ./s.sh', '`bash` runs the script "-$o", which the parse cannot see'],
    ['bash -c"$x"', '`bash` runs the script "-c$x", which the parse cannot see'],
  ])('%j is opaque', (line, why) => {
    expect(parseShellCommand(line).opaque).toEqual([why]);
  });

  it('the script name is cut to 80 characters in the reason', () => {
    const name = `./${'s'.repeat(100)}.sh`;
    expect(opaque(`bash ${name}`)).toBe(`\`bash\` runs the script ${JSON.stringify(name.slice(0, 80))}, which the parse cannot see`);
  });

  it('bash -c with no string runs nothing and hides nothing', () => {
    expect(seen('bash -c')).toEqual([['bash -c']]);
  });

  it('a -c string built at run time is opaque', () => {
    expect(opaque('bash -c "$cmd"')).toBe('`bash -c` runs a command string built at run time');
    expect(opaque('sh -c "rm $x"')).toBe('`sh -c` runs a command string built at run time');
  });

  it('a -c string that does not parse is said, and the shell is then not a delegate', () => {
    const parse = parseShellCommand("bash -c 'echo $('");
    expect(parse.parsed).toBe(true);
    expect(parse.opaque).toEqual(['the command string of `bash -c` it does not parse as bash: 1:6: reached EOF without matching ( with )']);
    expect(parse.commands).toHaveLength(1);
    expect(parse.commands[0]!.layers).toEqual([{ words: ['bash', '-c', 'echo $('], literal: true, moreArgs: false }]);
  });

  it('the commands of a -c string come after the shell that runs them, in source order', () => {
    expect(chains("ls && bash -c 'pwd; eval date' && id")).toEqual([['ls'], ["bash -c pwd; eval date"], ['pwd'], ['eval date'], ['date'], ['id']]);
  });

  it('what a -c string hides is said too', () => {
    expect(opaque("bash -c 'PATH=. ls'")).toBe('it sets PATH, which changes what commands run');
  });
});

describe('eval, source and alias', () => {
  it('eval joins its words with spaces and parses them', () => {
    expect(finals('eval rm -r v')).toContainEqual(['rm', '-r', 'v']);
    expect(finals("eval 'ls;' rm -r v")).toEqual(expect.arrayContaining([['ls'], ['rm', '-r', 'v']]));
    expect(parseShellCommand('eval rm -r v').opaque).toEqual([]);
  });

  it('eval alone runs nothing; eval of a string built at run time is opaque', () => {
    expect(seen('eval')).toEqual([['eval']]);
    // A command of its own, not a delegate: an allow pattern must name it.
    expect(parseShellCommand('eval').commands[0]!.layers).toStrictEqual([{ words: ['eval'], literal: true, moreArgs: false }]);
    expect(opaque('eval "$c"')).toBe('`eval` runs a command string built at run time');
    expect(opaque('eval ls "$c"')).toBe('`eval` runs a command string built at run time');
  });

  it('source and . run a script the parse cannot see', () => {
    expect(opaque('source ./env.sh')).toBe('`source` runs the script "./env.sh", which the parse cannot see');
    expect(opaque('. ./env.sh')).toBe('`.` runs the script "./env.sh", which the parse cannot see');
    expect(opaque(`. ./${'e'.repeat(100)}`)).toBe(`\`.\` runs the script ${JSON.stringify(`./${'e'.repeat(78)}`)}, which the parse cannot see`);
    expect(seen('source')).toEqual([['source']]);
  });

  it("alias values are parsed in turn: `alias x='rm -r v'` (with expand_aliases, x runs it)", () => {
    const parse = parseShellCommand("alias x='rm -r v' y='ls'");
    expect(parse.opaque).toEqual([]);
    expect(finals("alias x='rm -r v' y='ls'")).toEqual(expect.arrayContaining([['rm', '-r', 'v'], ['ls']]));
    const alias = parse.commands.find((c) => c.layers[0]!.words[0] === 'alias')!;
    expect(alias.layers[0]!.delegates).toBe(true);
  });

  it("an alias program's own path is not a definition", () => {
    expect(seen('/opt/a=rm/alias')).toEqual([['/opt/a=rm/alias']]);
  });

  it('an alias word without a name and value defines nothing', () => {
    expect(seen('alias x')).toEqual([['alias x']]);
    expect(seen("alias '=rm -r v'")).toEqual([['alias =rm -r v']]);
    expect(seen('alias -p')).toEqual([['alias -p']]);
    expect(parseShellCommand('alias x').commands[0]!.layers[0]!.delegates).toBeUndefined();
  });

  it('an alias value built at run time is opaque', () => {
    expect(opaque('alias x="rm $v"')).toBe('`alias` runs a command string built at run time');
  });
});

describe('strings parsed in turn are nested at most 8 deep', () => {
  // `eval` joins its words with spaces, so only a backquote and a backslash need escaping per level.
  const evals = (n: number, inner: string) => Array.from({ length: n }).reduce<string>((s) => `eval ${s.replace(/[\\`]/g, '\\$&')}`, inner);

  it('8 levels of eval are parsed; a 9th is opaque', () => {
    expect(parseShellCommand(evals(8, 'rm -r v')).opaque).toEqual([]);
    expect(finals(evals(8, 'rm -r v'))).toContainEqual(['rm', '-r', 'v']);
    const nine = parseShellCommand(evals(9, 'rm -r v'));
    expect(nine.opaque).toEqual(['`eval` strings are nested more than 8 deep']);
    expect(nine.commands.map((c) => c.layers[0]!.words[0])).not.toContain('rm');
  });

  it('backquotes count as a level: a backquote at the 9th level is opaque', () => {
    expect(parseShellCommand(evals(7, 'echo `rm -r v`')).opaque).toEqual([]);
    expect(finals(evals(7, 'echo `rm -r v`'))).toContainEqual(['rm', '-r', 'v']);
    expect(parseShellCommand(evals(8, 'echo `rm -r v`')).opaque).toEqual(['backquotes are nested more than 8 deep']);
    // Backquotes inside backquotes are levels too.
    expect(parseShellCommand(evals(6, 'echo `echo \\`rm -r v\\``')).opaque).toEqual([]);
    expect(parseShellCommand(evals(7, 'echo `echo \\`rm -r v\\``')).opaque).toEqual(['backquotes are nested more than 8 deep']);
  });
});

describe('backquotes are read as bash reads them', () => {
  it('outside double quotes, \\" stays as it is; inside, it is a quote', () => {
    expect(finals('echo `echo \\"x\\"`')).toContainEqual(['echo', '"x"']);
    expect(finals('echo "`echo \\"x\\"`"')).toContainEqual(['echo', 'x']);
  });

  it('\\$, \\` and \\\\ lose their backslash', () => {
    const parse = parseShellCommand('echo `echo \\$HOME \\\\a`');
    const inner = parse.commands.find((c) => c.source !== 'echo `echo \\$HOME \\\\a`')!;
    expect(inner.layers[0]).toEqual({ words: ['echo', '$HOME', 'a'], literal: false, moreArgs: false });
    expect(finals('echo `echo \\`rm -r v\\``')).toContainEqual(['rm', '-r', 'v']);
  });

  it('a backquote right after a double-quoted word is not inside it', () => {
    expect(finals('echo "a"`echo \\"x\\"`')).toContainEqual(['echo', '"x"']);
    expect(finals('echo `echo \\"x\\"`"a"')).toContainEqual(['echo', '"x"']);
  });

  it('a backquoted body that does not parse as bash reads it is said (the line itself parsed)', () => {
    const parse = parseShellCommand('echo "`echo \\"`"');
    expect(parse.parsed).toBe(true);
    expect(parse.opaque).toHaveLength(1);
    expect(parse.opaque[0]).toMatch(/^a backquoted command it does not parse as bash: 1:\d+: /);
  });

  it('what a backquoted body hides is said', () => {
    expect(opaque('echo `PATH=. ls`')).toBe('it sets PATH, which changes what commands run');
  });

  it('the backquoted commands come after the one holding them', () => {
    expect(chains('echo `ls` && rm -r v')).toEqual([['echo `ls`'], ['ls'], ['rm -r v']]);
  });
});

describe('words are decoded as the shell would', () => {
  it.each([
    ["echo 'a b' \"c d\" e\\ f", ['echo', 'a b', 'c d', 'e f']],
    ['echo a\\nb \\\\ \\$x', ['echo', 'anb', '\\', '$x']],
    ['echo "a\\$b" "a\\`b" "a\\"b" "a\\\\b" "a\\nb" "a\\\'b"', ['echo', 'a$b', 'a`b', 'a"b', 'a\\b', 'a\\nb', "a\\'b"]],
    ["echo 'a\\nb' 'a\\\\b'", ['echo', 'a\\nb', 'a\\\\b']],
    ["echo x'y'\"z\"", ['echo', 'xyz']],
    ['echo "a\\\nb" c\\\nd', ['echo', 'ab', 'cd']],
    ['r\\\nm x', ['rm', 'x']],
  ])('%j has the words %j', (line, words) => {
    const parse = parseShellCommand(line);
    expect(parse.commands.map((c) => c.layers[0])).toEqual([{ words, literal: true, moreArgs: false }]);
  });

  it.each([
    ['n', '\n'], ['t', '\t'], ['r', '\r'], ['a', '\x07'], ['b', '\b'], ['e', '\x1b'], ['E', '\x1b'], ['f', '\f'], ['v', '\v'],
    ['\\', '\\'], ["'", "'"], ['"', '"'], ['?', '?'],
    ['x41', 'A'], ['xaF', '\xaf'], ['x4g', '\x04g'], ['x412', 'A2'], ['x', '\\x'],
    ['u263a', '☺'], ['u263A', '☺'], ['U0001F600', '😀'], ['U0010FFFF', '\u{10ffff}'], ['u', '\\u'],
    ['101', 'A'], ['1011', 'A1'], ['0', '\0'], ['7', '\x07'], ['777', '\xff'], ['18', '\x018'],
    ['ca', '\x01'], ['cA', '\x01'], ['c[', '\x1b'], ['c?', '\x1f'],
    ['q', '\\q'],
  ])("$'\\%s' is %j", (escape, value) => {
    const line = `echo $'<\\${escape}>'`;
    expect(finals(line)).toEqual([['echo', `<${value}>`]]);
  });

  it("a \\c at the end, with nothing to control, is left as written", () => {
    expect(finals("echo $'\\c'")).toEqual([['echo', '\\c']]);
  });

  it("a \\U escape past the last code point is left as written", () => {
    expect(finals("echo $'\\U00110000'")[0]![1]).toBe('\\U00110000');
  });

  it("$'…' escapes run over several in one string", () => {
    expect(finals("echo $'a\\tb\\x41\\101\\n'")).toEqual([['echo', 'a\tbAA\n']]);
  });

  it('a word with an expansion is kept as its source text and is not literal', () => {
    const parse = parseShellCommand('rm -r "$dir/x" $(pwd) $((1+2)) ${y} pre"$z"post');
    expect(parse.commands[0]!.layers[0]).toEqual({ words: ['rm', '-r', '$dir/x', '$(pwd)', '$((1+2))', '${y}', 'pre$zpost'], literal: false, moreArgs: false });
    expect(parse.opaque).toEqual([]);
  });
});

describe('a command name built at run time is opaque', () => {
  it.each([
    ['x{a,bc} y', 'x{a,bc}'],
    ['$cmd -r v', '$cmd'],
    ['${cmd} -r v', '${cmd}'],
    ['"$cmd" -r v', '$cmd'],
    ['$(echo rm) -r v', '$(echo rm)'],
    ['$((1)) x', '$((1))'],
    ['/bin/r? -r v', '/bin/r?'],
    ['r* -r v', 'r*'],
    ['/bin/[r]m -r v', '/bin/[r]m'],
    ['{rm,-r,v}', '{rm,-r,v}'],
    ['r{m,x} -r v', 'r{m,x}'],
    ['{a..z}m -r v', '{a..z}m'],
    ['@(rm) -r v', '@(rm)'],
  ])('%j', (line, name) => {
    expect(parseShellCommand(line).opaque).toEqual([`the command name ${JSON.stringify(name)} is built at run time`]);
    expect(chains(line)[0]).toEqual([parseShellCommand(line).commands[0]!.layers[0]!.words.join(' ')]);
  });

  it.each(["'r?' x", 'r\\? x', "'{rm,x}' y", '\\{rm,x} y', '{rm} x', '{a.b} x', '{rm,x y', "'r*' x", "'[r]m' x", 'r\\[ x'])(
    'a quoted or escaped glob character is a plain character: %j has a literal name',
    (line) => {
      expect(parseShellCommand(line).opaque).toEqual([]);
    },
  );

  it('the name is cut to 80 characters in the reason', () => {
    const name = `$${'x'.repeat(100)}`;
    expect(opaque(`${name} a`)).toBe(`the command name ${JSON.stringify(name.slice(0, 80))} is built at run time`);
  });
});

describe('variables that steer what runs', () => {
  it.each([
    'PATH', 'BASH_ENV', 'ENV', 'PS4', 'PROMPT_COMMAND', 'SHELLOPTS', 'BASHOPTS', 'IFS', 'CDPATH', 'GLOBIGNORE', 'BASH_LOADABLES_PATH',
    'LD_PRELOAD', 'LD_LIBRARY_PATH', 'LD_AUDIT', 'GIT_SSH_COMMAND', 'GIT_SSH', 'GIT_EXTERNAL_DIFF', 'GIT_PAGER', 'GIT_EDITOR', 'GIT_EXEC_PATH',
    'GIT_CONFIG_PARAMETERS', 'GIT_CONFIG_GLOBAL', 'PAGER', 'EDITOR', 'VISUAL', 'NODE_OPTIONS', 'PYTHONSTARTUP', 'PERL5OPT', 'RUBYOPT', 'BASH_FUNC_ls%%',
  ])('setting %s is opaque, before a command, alone, exported, through env or sudo, as a for variable', (name) => {
    const why = `it sets ${name}, which changes what commands run`;
    expect(parseShellCommand(`env ${name}=x ls`).opaque).toEqual([why]);
    expect(parseShellCommand(`sudo ${name}=x ls`).opaque).toEqual([why]);
    // `BASH_FUNC_ls%%` is not a name bash assigns to (it is a command word there); env and sudo set it.
    if (!name.includes('%')) {
      expect(parseShellCommand(`${name}=x ls`).opaque).toEqual([why]);
      expect(parseShellCommand(`${name}=x; ls`).opaque).toEqual([why]);
      expect(parseShellCommand(`export ${name}=x`).opaque).toEqual([why]);
      expect(parseShellCommand(`for ${name} in x; do ls; done`).opaque).toEqual([why]);
    }
  });

  it('other names are not: a steering name inside a longer one, lower case, or a value', () => {
    for (const line of ['MYPATH=x ls', 'PATHS=x ls', 'path=x ls', 'X_BASH_FUNC_f=x ls', 'env XBASH_FUNC_f=1 ls', 'A=PATH ls', 'echo PATH=x', 'timeout 5 PATH=x']) {
      expect(parseShellCommand(line).opaque, line).toEqual([]);
    }
  });

  it('a function named like a steering variable sets nothing', () => {
    expect(seen('PATH() { ls; }; PATH')).toEqual([['ls'], ['PATH']]);
  });

  it('a reason said twice is listed once', () => {
    expect(parseShellCommand('PATH=. ls; PATH=. ls').opaque).toEqual(['it sets PATH, which changes what commands run']);
  });
});

describe('declarations and let are commands too', () => {
  it.each([
    ['export A=1', ['export', 'A=1']],
    ['declare -x A=1', ['declare', '-x', 'A=1']],
    ['local A', ['local', 'A']],
    ['readonly B=2', ['readonly', 'B=2']],
    ['typeset a=1', ['typeset', 'a=1']],
    ['let x=1+2 y=3', ['let', 'x=1+2', 'y=3']],
    ['export', ['export']],
    ['declare', ['declare']],
  ])('%j', (line, words) => {
    expect(parseShellCommand(line).commands).toEqual([{ source: line, layers: [{ words, literal: false, moreArgs: false }] }]);
  });

  it('an assignment alone runs no command, but what it expands does', () => {
    expect(parseShellCommand('x=1').commands).toEqual([]);
    expect(chains('x=1 y=$(rm -r v)')).toEqual([['rm -r v']]);
  });
});

describe('each simple command once, with its source text', () => {
  it('a command with redirections and assignments has them in its source', () => {
    expect(parseShellCommand('A=1 >o rm -r v 2>&1 && ls').commands.map((c) => c.source)).toEqual(['A=1 >o rm -r v 2>&1', 'ls']);
  });

  it('a coproc command is its whole text', () => {
    expect(parseShellCommand('coproc rm -r v').commands.map((c) => c.source)).toEqual(['rm -r v']);
    expect(parseShellCommand('coproc rm -r v >o').commands.map((c) => c.source)).toEqual(['rm -r v >o']);
  });

  it('every command of a compound, in source order, each once', () => {
    expect(chains('ls | grep x && { cat y; } || (echo $(date)); f() { rm v; }')).toEqual([['ls'], ['grep x'], ['cat y'], ['echo $(date)'], ['date'], ['rm v']]);
    expect(chains('time ls; ! ls; coproc ls; [[ $(ls) ]]')).toEqual([['ls'], ['ls'], ['ls'], ['ls']]);
  });
});

describe('exact: the command as written, when all of it is literal', () => {
  const exact = (line: string) => parseShellCommand(line).commands[0]!.exact;

  it('is the same for the same words, assignments and redirections however spaced or quoted', () => {
    expect(exact('rm  -r   v')).toBe(exact('rm -r v'));
    expect(exact("'rm' -r \"v\"")).toBe(exact('rm -r v'));
    expect(exact('A=1 rm -r v >o')).toBe(exact('A=1  rm -r v  >o'));
  });

  it('differs when a word, an assignment or a redirection differs', () => {
    const all = ['rm -r v', 'rm -r w', 'A=1 rm -r v', 'A=2 rm -r v', 'rm -r v >o', 'rm -r v >p', 'rm -r v 2>o', "cat <<'E'\nx\nE", "cat <<'E'\ny\nE"].map(exact);
    expect(all.every((e) => e !== undefined)).toBe(true);
    expect(new Set(all).size).toBe(all.length);
  });

  it('is absent when a word, an assignment value or a redirection is built at run time', () => {
    for (const line of ['rm -r "$v"', 'A=$x rm -r v', 'rm -r v >$f', 'cat <<E\n$x\nE', 'rm -r v >"$f"']) expect(exact(line), line).toBeUndefined();
    for (const line of ['A= rm -r v', 'rm -r v 2>&1', "cat <<'E'\n$x\nE", 'A="x" rm']) expect(exact(line), line).toBeDefined();
  });

  it('a command with a word built at run time has no exact key at all', () => {
    expect(parseShellCommand('rm "$x"').commands).toStrictEqual([{ source: 'rm "$x"', layers: [{ words: ['rm', '$x'], literal: false, moreArgs: false }] }]);
  });

  it('a command built at run time has no exact key either', () => {
    expect(exact('$x -r v')).toBeUndefined();
  });
});

describe('lines that do not parse', () => {
  it('a syntax error is said with its position', () => {
    const parse = parseShellCommand('echo $(');
    expect(parse).toEqual({ parsed: false, commands: [], opaque: ['it does not parse as bash: 1:6: reached EOF without matching ( with )'] });
  });

  it("the parser's message is cut to 200 characters (it may quote a long word of the line)", () => {
    const op = `-${'x'.repeat(300)}`;
    expect(parseShellCommand(`[[ a ${op} b ]]`).opaque).toEqual([`it does not parse as bash: ${`1:6: not a valid test operator: ${op}`.slice(0, 200)}`]);
  });

  it('a line nested too deep for the parser is said, not thrown', () => {
    expect(parseShellCommand(`${'('.repeat(4000)}ls${')'.repeat(4000)}`)).toEqual({
      parsed: false,
      commands: [],
      opaque: ['it does not parse as bash: Maximum call stack size exceeded'],
    });
  });

  it(`a line up to ${MAX_PARSED_COMMAND_LENGTH} characters parses; a longer one does not`, () => {
    expect(MAX_PARSED_COMMAND_LENGTH).toBe(8192);
    const at = `ls #${'x'.repeat(MAX_PARSED_COMMAND_LENGTH - 4)}`;
    expect(at).toHaveLength(8192);
    expect(parseShellCommand(at).parsed).toBe(true);
    expect(parseShellCommand(`${at}x`)).toEqual({
      parsed: false,
      commands: [],
      opaque: ['the command is longer than 8192 characters, too long to check (split it, or write files with the write tool)'],
    });
  });
});

describe('printed: the program in a normal form', () => {
  it('respacing and comments do not change it; quoting and operators do', () => {
    const printed = (line: string) => parseShellCommand(line).printed;
    expect(printed('git   status&&rm -rf x # c')).toBe(printed('git status && rm -rf x'));
    expect(printed('git status && rm -rf x')).toBeDefined();
    expect(printed("'git' status && rm -rf x")).not.toBe(printed('git status && rm -rf x'));
    expect(printed('git status; rm -rf x')).not.toBe(printed('git status && rm -rf x'));
    expect(printed('echo $(')).toBeUndefined();
  });
});

describe('the parse is shared: callers get the same frozen answer', () => {
  it('a caller cannot change what the next caller sees', () => {
    const first = parseShellCommand('ls -la');
    expect(() => {
      (first as { parsed: boolean }).parsed = false;
    }).toThrow(TypeError);
    expect(parseShellCommand('ls -la').parsed).toBe(true);
  });
});
