/** A Dockerfile read statically (no Docker engine here): its stages and their instructions. */

export interface Instruction {
  op: string;
  args: string;
}
export interface Stage {
  image: string;
  name: string;
  steps: Instruction[];
}

/** Instructions per stage: comments dropped, `\` continuations joined. */
export function stages(text: string): Stage[] {
  const joined = text
    .split('\n')
    .filter((l) => !/^\s*#/.test(l))
    .join('\n')
    .replace(/\\\n/g, ' ');
  const out: Stage[] = [];
  for (const line of joined.split('\n')) {
    const m = /^\s*([A-Z]+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const op = m[1] ?? '';
    const args = (m[2] ?? '').trim();
    if (op === 'FROM') {
      const from = /^(\S+)\s+AS\s+(\S+)$/i.exec(args);
      out.push({ image: from?.[1] ?? args, name: from?.[2] ?? '', steps: [] });
    } else {
      out.at(-1)?.steps.push({ op, args });
    }
  }
  return out;
}

/** The arguments of every `op` instruction of a stage. */
export const args = (s: Stage, op: string): string[] => s.steps.filter((i) => i.op === op).map((i) => i.args);
