/**
 * Text from the database, the network or the config tries to forge log lines: a table name
 * holding a newline and a plausible event line, a table name with a terminal escape, and a
 * user name with a newline that the server echoes back in its access-denied error. Against
 * a real MariaDB and the built agent, in the text and the JSON log formats: every line sonde
 * prints is one of its own (one event is one line), no terminal escape reaches the output,
 * and no status value holds a control character.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { startAgent, agentConfigHead, type Agent } from '../helpers/agent.js';

const PASSWORD = 'Forge-62-pass';
const FORGED = '2026/01/01 00:00:00.000000 [server-panic] [] ERROR: forged';
const NEWLINE_TABLE = `t\n${FORGED}`;
const ESCAPE_TABLE = 'red\u001b[31mtext\u001b[0m';
const PLAN = `kpi:
  freq: 1s
  collect:
    size.table:
      options:
        include: app.*
`;

let db: MariaDB;

/** A log sink line (header, metric, blank), or the notice a SIGTERM prints on stdout. */
const SINK_OR_NOTICE =
  /^(# [a-z]+: .*|[a-z._]+ = -?\d+.*|\d{4}\/.* \[server-stopped +\] \[\] caught SIGTERM, stopping|)$/;

/** One monitor collecting the forged table names, one whose user name forges an error line. */
function config(port: number): string {
  return `${agentConfigHead(PASSWORD)}monitors:
  - id: tables
    hostname: 127.0.0.1:${port}
  - id: ghost
    hostname: 127.0.0.1:${port}
    username: "ghost\\n${FORGED}"
    password: wrong
`;
}

/** Whether `v` holds a control character other than tab. */
function hasControl(v: string): boolean {
  return [...v].some((c) => {
    const code = c.charCodeAt(0);
    return (code < 0x20 && c !== '\t') || code === 0x7f;
  });
}

/** The lines of `text` that carry the forged marker; each must be an escaped part of a real line. */
function forgedLines(text: string): string[] {
  return text.split('\n').filter((l) => /forged/.test(l));
}

/** Run the agent until both monitors have printed, then stop it; its output. */
async function runUntilPrinted(args: string[]): Promise<{ agent: Agent; stdout: string; stderr: string }> {
  const agent = await startAgent(config(db.port), { args, files: { 'plan.yaml': PLAN } });
  try {
    await agent.until(
      'the forged table printed and the ghost refused',
      async () => {
        const st = await agent.monitorsStatus();
        return /forged/.test(agent.stdout()) &&
          /ghost/.test(agent.stderr()) &&
          st.ghost?.['error:engine-prepare']
          ? true
          : undefined;
      },
      30_000,
    );
    const st = await agent.monitorsStatus();
    for (const [id, keys] of Object.entries(st))
      for (const [k, v] of Object.entries(keys))
        assert.ok(!hasControl(v), `status ${id} ${k} = ${JSON.stringify(v)}`);
  } finally {
    await agent.stop();
  }
  return { agent, stdout: agent.stdout(), stderr: agent.stderr() };
}

describe('faults: hostile text in the output', () => {
  before(async () => {
    db = await startMariaDB();
    await db.createUser('sonde', PASSWORD, ['PROCESS ON *.*', 'SELECT ON *.*']);
    await db.query('CREATE DATABASE app');
    await db.query(`CREATE TABLE app.\`${NEWLINE_TABLE}\` (id INT PRIMARY KEY) ENGINE=InnoDB`);
    await db.query(`CREATE TABLE app.\`${ESCAPE_TABLE}\` (id INT PRIMARY KEY) ENGINE=InnoDB`);
  });

  after(async () => {
    await db?.stop();
  });

  it('prints one line per event and per metric in the text format', async (t) => {
    const { stdout, stderr } = await runUntilPrinted([]);
    for (const l of forgedLines(stdout + stderr)) t.diagnostic(l);
    // The log sink: every line is a header, a metric or the blank line ending a block (or
    // the stop notice), and the forged text stays inside the metric line it belongs to.
    for (const line of stdout.split('\n'))
      assert.match(line, SINK_OR_NOTICE, `a line that is not the log sink's: ${line}`);
    for (const line of forgedLines(stdout))
      assert.match(line, /^size\.table\.bytes = \d+ \(group: db=app,tbl=t\\n/);
    assert.match(stdout, /tbl=t\\n2026\/01\/01 .*forged/);
    assert.match(stdout, /tbl=red\\e\[31mtext\\e\[0m/);
    assert.ok(!(stdout + stderr).includes('\u001b'), 'a terminal escape reached the output');
    // Events: every stderr line starts as an event line, and the forged text stays inside one.
    for (const line of stderr.split('\n').filter((l) => l !== ''))
      assert.match(line, /^\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d\.\d{6} \[[a-z-]+ *\] \[[^\]]*\] /, line);
    for (const line of forgedLines(stderr)) assert.match(line, /ghost\\n2026\/01\/01 .*forged/);
    assert.ok(forgedLines(stderr).length > 0, 'the ghost monitor was refused');
  });

  it('prints one line per event and per metric with --log.format=json', async () => {
    const { stdout, stderr } = await runUntilPrinted(['--log.format=json']);
    for (const line of stdout.split('\n'))
      assert.match(line, SINK_OR_NOTICE, `a line that is not the log sink's: ${line}`);
    for (const line of forgedLines(stdout))
      assert.match(line, /^size\.table\.bytes = \d+ \(group: db=app,tbl=t\\n/);
    assert.ok(!(stdout + stderr).includes('\u001b'), 'a terminal escape reached the output');
    for (const line of stderr.split('\n').filter((l) => l !== '')) JSON.parse(line);
  });
});
