import { startMariaDB } from '/work/wt-cli/dist/test/helpers/mariadb.js';
import { createConnection } from 'mysql2/promise';
const db = await startMariaDB({});
try {
  console.log(await db.query("SELECT @@version, @@log_slow_filter, @@have_ssl, @@lock_wait_timeout"));
  await db.query("SET GLOBAL log_output='TABLE', GLOBAL long_query_time=0, GLOBAL slow_query_log=1");
  await db.createUser('u1','pw-1234',['PROCESS ON *.*']);
  for (const filt of [null, 'tmp_table_on_disk,filesort_on_disk']) {
    const c = await createConnection({host:'127.0.0.1', port: db.port, user:'u1', password:'pw-1234'});
    if (filt) await c.query(`SET SESSION log_slow_filter='${filt}'`);
    await c.query('SHOW GLOBAL STATUS'); await c.query('SHOW GLOBAL VARIABLES'); await c.query('SELECT NAME FROM information_schema.INNODB_METRICS');
    console.log(filt, (await c.query('SELECT @@session.log_slow_filter'))[0]);
    await c.end();
    console.log(await db.query("SELECT user_host, LEFT(sql_text,40) s FROM mysql.slow_log WHERE user_host LIKE 'u1%'"));
    await db.query("TRUNCATE mysql.slow_log");
  }
} finally { await db.stop(); }
