'use strict'
// One fixed scenario of an npm PostgreSQL client, run by npm_test.go once
// against PostgreSQL directly and once through qprouter in each pool mode.
//
//   node clients.js pg|postgres|large
//
// NPM_PG_URL is the connection URL and NPM_PG_MAX the connections a client
// pool may open at once (below the proxy's pool size in session mode, where
// a pooled connection holds a server until it closes). Every step's result
// goes into one JSON object on stdout, a step per line; nothing in it may
// depend on time, connection or process, so the outputs compare exactly.
// Steps run one after the other and each expected error is recorded, not
// thrown; anything unexpected exits 1 with the step's name on stderr.

const scenario = process.argv[2]
const url = process.env.NPM_PG_URL
const max = Number(process.env.NPM_PG_MAX || 4)
const workers = 8 // concurrent tasks, more than the proxy's servers

const out = {}
let current = ''

async function step(name, fn) {
  current = name
  out[name] = await fn()
}

function range(n) {
  return Array.from({ length: n }, (_, i) => i)
}

function err(e) {
  if (!e || !e.code) throw e // not a server error: a bug, not a result
  return { error: e.code, severity: e.severity, message: e.message }
}

async function fails(p) {
  try {
    await p
  } catch (e) {
    return err(e)
  }
  throw new Error('expected an error')
}

// Every type the scenarios read; literals, so no time zone or clock enters.
const typesQuery = `select 42::int4 as i4, 9007199254740993::int8 as i8,
  12345.678::numeric as num, 1.5::float8 as f8, 'text ✓'::text as txt,
  '2024-02-29 12:34:56.789+02'::timestamptz as tstz, '2024-02-29'::date as d,
  true as yes, false as no, null::int as nul, '\\x00ff10'::bytea as bin,
  '{"a": [1, 2, {"b": null}]}'::json as js, '{"z": 1, "a": 2}'::jsonb as jsb,
  array[1, 2, 3]::int[] as ints, array['a', 'b c', null]::text[] as texts,
  'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid as u`

// ---- pg and pg-cursor ----

async function runPg() {
  const pg = require('pg')
  const Cursor = require('pg-cursor')
  const connect = async () => {
    const c = new pg.Client({ connectionString: url })
    await c.connect()
    return c
  }
  const res = r => ({ command: r.command, rowCount: r.rowCount, fields: r.fields.map(f => [f.name, f.dataTypeID]), rows: r.rows })
  const c = await connect()

  await step('setup', async () => {
    await c.query('drop table if exists npm_pg_items, npm_pg_log')
    await c.query('create table npm_pg_items (id int primary key, name text not null, price numeric(10,2) not null)')
    await c.query("insert into npm_pg_items select g, 'item ' || g, g * 1.25 from generate_series(1, 1500) g")
    await c.query('create table npm_pg_log (who text not null, n int not null)')
    return res(await c.query('select count(*)::int as n, sum(price) as total from npm_pg_items'))
  })

  // No values: the simple protocol; several statements answer an array.
  await step('simple', async () => res(await c.query("select 1 as one, 'two' as two, null as three")))
  await step('simple_multi', async () => (await c.query(
    "select 1 as a; select 'b' as b union all select 'c' order by 1; update npm_pg_items set name = name where id < 0"
  )).map(res))
  await step('simple_error', () => fails(c.query('select 1/0')))

  // Values: the extended protocol with the unnamed statement.
  await step('params', async () => res(await c.query(
    'select $1::int + $2::int as sum, $3::text as t, $4::text is null as isnull', [2, 40, 'héllo', null])))
  await step('params_bytea', async () => res(await c.query(
    'select $1::bytea as b, length($1::bytea) as n', [Buffer.from([0, 1, 2, 255])])))
  await step('params_error', () => fails(c.query('select $1::int as n', ['abc'])))
  await step('params_binary', async () => res(await c.query({
    text: 'select $1::int as i, $2::text as t, $3::float8 as f, $4::bool as b', values: [7, 'x', 2.5, true], binary: true })))
  await step('types_simple', async () => res(await c.query(typesQuery)))
  await step('types_extended', async () => res(await c.query(typesQuery + ' where $1::int = 1', [1])))

  // A named statement, prepared once per connection and reused.
  await step('named', async () => {
    const q = v => c.query({ name: 'npm_item', text: 'select id, name, price from npm_pg_items where id = $1', values: [v] })
    const rows = []
    for (const v of [1, 2, 1500, 9999]) rows.push(res(await q(v)))
    return rows
  })

  // A named statement that does not parse is not prepared: twice the error.
  await step('named_error', async () => {
    const a = []
    for (let i = 0; i < 2; i++) a.push(await fails(c.query({ name: 'npm_bad', text: 'selec $1', values: [1] })))
    a.push(res(await c.query({ name: 'npm_item', text: 'select id, name, price from npm_pg_items where id = $1', values: [3] })))
    return a
  })

  // Transactions: committed, rolled back, and an error in the middle.
  await step('tx_commit', async () => {
    const a = []
    a.push((await c.query('begin')).command)
    a.push(res(await c.query("insert into npm_pg_log values ('commit', 1), ('commit', 2) returning n")))
    a.push(res(await c.query({ name: 'npm_log_add', text: 'insert into npm_pg_log values ($1, $2)', values: ['commit', 3] })))
    a.push((await c.query('commit')).command)
    a.push(res(await c.query("select n from npm_pg_log where who = 'commit' order by n")))
    return a
  })
  await step('tx_rollback', async () => {
    const a = []
    await c.query('begin')
    await c.query({ name: 'npm_log_add', text: 'insert into npm_pg_log values ($1, $2)', values: ['rollback', 1] })
    a.push(res(await c.query("select count(*)::int as n from npm_pg_log where who = 'rollback'")))
    a.push((await c.query('rollback')).command)
    a.push(res(await c.query("select count(*)::int as n from npm_pg_log where who = 'rollback'")))
    return a
  })
  await step('tx_error', async () => {
    const a = []
    await c.query('begin')
    await c.query("insert into npm_pg_log values ('error', 1)")
    a.push(await fails(c.query('select 1/0')))
    a.push(await fails(c.query('select 1')))
    a.push(await fails(c.query('select $1::int', [1])))
    a.push((await c.query('rollback')).command)
    await c.query('begin')
    await c.query({ name: 'npm_log_add', text: 'insert into npm_pg_log values ($1, $2)', values: ['error', 2] })
    a.push(await fails(c.query({ name: 'npm_item', text: 'select id, name, price from npm_pg_items where id = $1', values: ['x'] })))
    a.push((await c.query('rollback')).command)
    a.push(res(await c.query("select count(*)::int as n from npm_pg_log where who = 'error'")))
    return a
  })

  // pg-cursor: 1200 rows in batches of 100 inside a transaction, then one
  // closed after two batches outside any (an implicit transaction).
  await step('cursor_tx', async () => {
    await c.query('begin')
    const cur = c.query(new Cursor('select id, name, price from npm_pg_items where id <= $1 order by id', [1200]))
    const batches = []
    for (;;) {
      const rows = await cur.read(100)
      if (rows.length === 0) break
      batches.push([rows.length, rows[0].id, rows[rows.length - 1].id, rows[rows.length - 1].price])
    }
    await cur.close()
    const inside = res(await c.query('select count(*)::int as n from npm_pg_items'))
    await c.query('commit')
    return { batches, inside }
  })
  await step('cursor_early_close', async () => {
    const cur = c.query(new Cursor('select id from npm_pg_items order by id desc'))
    const a = [(await cur.read(100)).length, (await cur.read(100))[99]]
    await cur.close()
    a.push(res(await c.query('select 7 as after')))
    return a
  })

  // A cursor left open without a transaction (so without Sync) while
  // other connections run queries.
  await step('cursor_concurrent', async () => {
    const pool = new pg.Pool({ connectionString: url, max })
    const cur = c.query(new Cursor('select id from npm_pg_items where id <= $1 order by id', [1000]))
    const seen = [(await cur.read(100)).length]
    const got = await Promise.all(range(workers).map(async w => {
      let s = 0
      for (let i = 0; i < 4; i++) s += (await pool.query('select count(*)::int as n from npm_pg_items where id <= $1', [w * 10 + i])).rows[0].n
      return s
    }))
    for (;;) {
      const rows = await cur.read(300)
      seen.push(rows.length)
      if (rows.length === 0) break
    }
    await cur.close()
    await pool.end()
    return { seen, got }
  })

  // Settings from the startup packet and from SET, kept across the
  // transactions of one connection while other connections run.
  await step('settings', async () => {
    const k = new pg.Client({
      connectionString: url, application_name: 'npm pg', statement_timeout: 300,
      options: '-c work_mem=8MB -c search_path=public,pg_catalog',
    })
    await k.connect()
    const show = "select current_setting('application_name') as app, current_setting('statement_timeout') as st, current_setting('work_mem') as wm, current_setting('search_path') as sp"
    const a = [res(await k.query(show))]
    a.push(await fails(k.query('select pg_sleep(5)')))
    await k.query("set work_mem = '16MB'")
    await k.query('begin')
    await k.query("set local statement_timeout = '1min'")
    await k.query('commit')
    const others = range(4).map(async () => {
      const o = await connect()
      for (let i = 0; i < 5; i++) await o.query("select current_setting('work_mem')")
      await o.end()
    })
    for (let i = 0; i < 5; i++) a.push(res(await k.query(show)))
    await Promise.all(others)
    await k.end()
    return a
  })

  // pg.Pool: 8 tasks share `max` connections, each running named
  // statements and a short transaction with them, over and over.
  await step('pool_named', async () => {
    const pool = new pg.Pool({ connectionString: url, max })
    const got = await Promise.all(range(workers).map(async w => {
      const rows = []
      for (let i = 0; i < 8; i++) {
        const id = w * 100 + i + 1
        const r = await pool.query({ name: 'npm_item', text: 'select id, name, price from npm_pg_items where id = $1', values: [id] })
        const n = await pool.query({ name: 'npm_below', text: 'select count(*)::int as n from npm_pg_items where id <= $1', values: [id] })
        rows.push([r.rows[0].name, r.rows[0].price, n.rows[0].n])
      }
      const tx = await pool.connect()
      try {
        await tx.query('begin')
        await tx.query({ name: 'npm_log_add', text: 'insert into npm_pg_log values ($1, $2)', values: ['pool', w] })
        rows.push((await tx.query({ name: 'npm_log_count', text: 'select count(*)::int as n from npm_pg_log where who = $1 and n = $2', values: ['pool', w] })).rows[0].n)
        await tx.query('commit')
      } finally {
        tx.release()
      }
      return rows
    }))
    await pool.end()
    return got
  })

  // More clients at once than the proxy has servers, each connecting,
  // running a transaction and leaving (in session mode they queue).
  await step('clients', async () => {
    const got = await Promise.all(range(workers).map(async w => {
      const k = await connect()
      try {
        await k.query('begin')
        await k.query({ name: 'npm_log_add', text: 'insert into npm_pg_log values ($1, $2)', values: ['client', w] })
        const r = await k.query({ name: 'npm_item', text: 'select id, name, price from npm_pg_items where id = $1', values: [w + 1] })
        await k.query('commit')
        // One name, a different text on every client.
        const mine = []
        for (const v of [1, 2]) {
          mine.push((await k.query({ name: 'npm_mine', text: `select $1::int * ${w} as v, ${w} as w`, values: [v] })).rows[0])
        }
        return [r.rows, mine]
      } finally {
        await k.end()
      }
    }))
    const n = await c.query("select count(*)::int as n, sum(n)::int as s from npm_pg_log where who = 'client'")
    return { got, after: n.rows }
  })

  await c.end()
}

// ---- postgres (postgres.js) ----

async function runPostgres() {
  const postgres = require('postgres')
  const opts = { onnotice: () => {} }
  // One connection: concurrent queries are pipelined on it.
  const sql = postgres(url, { ...opts, max: 1 })
  const rows = r => ({ command: r.command, count: r.count, columns: (r.columns || []).map(c => [c.name, c.type]), rows: [...r] })

  await step('setup', async () => {
    await sql`drop table if exists npm_js_items, npm_js_log`
    await sql`create table npm_js_items (id int primary key, name text not null, price numeric(10,2) not null)`
    await sql`insert into npm_js_items select g, 'item ' || g, g * 1.25 from generate_series(1, 1500) g`
    await sql`create table npm_js_log (who text not null, n int not null)`
    return rows(await sql`select count(*)::int as n, sum(price) as total from npm_js_items`)
  })

  // Pipelining: 50 queries of four shapes in flight at once on one
  // connection, every one a named prepared statement (prepare: true).
  await step('pipeline', async () => {
    const qs = range(50).map(i => {
      switch (i % 4) {
        case 0: return sql`select ${i}::int as i, ${'v' + i}::text as v`
        case 1: return sql`select id, name, price from npm_js_items where id = ${i}`
        case 2: return sql`select count(*)::int as n from npm_js_items where id <= ${i * 10}`
        default: return sql`select ${i}::int / ${i % 3}::int as q` // some divide by zero
      }
    })
    const settled = await Promise.allSettled(qs)
    return settled.map(s => s.status === 'fulfilled' ? s.value.map(r => ({ ...r })) : err(s.reason))
  })

  // prepare: false: the unnamed statement, pipelined the same way.
  await step('pipeline_unprepared', async () => {
    const raw = postgres(url, { ...opts, max: 1, prepare: false })
    try {
      const settled = await Promise.allSettled(range(20).map(i => i % 5 === 4
        ? raw`select ${i}::int / 0 as q`
        : raw`select ${i}::int as i, name from npm_js_items where id = ${i + 1}`))
      return settled.map(s => s.status === 'fulfilled' ? s.value.map(r => ({ ...r })) : err(s.reason))
    } finally {
      await raw.end()
    }
  })

  await step('types', async () => rows(await sql.unsafe(typesQuery)))
  await step('types_prepared', async () => rows(await sql.unsafe(typesQuery + ' where $1::int = 1', [1], { prepare: true })))
  await step('params', async () => rows(
    await sql`select ${2}::int + ${40}::int as sum, ${'héllo'} as t, ${null}::text is null as isnull, ${Buffer.from([0, 1, 255])}::bytea as b`))

  // sql.unsafe: the simple protocol without values (several statements
  // with .simple()), the unnamed statement with them.
  await step('unsafe', async () => {
    const a = []
    a.push(rows(await sql.unsafe("select 'x' as x, 1 as n")))
    a.push((await sql.unsafe("select 1 as a; select 'b' as b").simple()).map(rows))
    a.push(rows(await sql.unsafe('select $1::int * 2 as twice', [21])))
    a.push(await fails(sql.unsafe('select * from npm_js_missing')))
    a.push(rows(await sql.unsafe('select 1 as still')))
    return a
  })

  // Errors at Parse: with a value postgres.js sends Parse, Describe and
  // Flush alone and Sync only after the error; without, all at once.
  await step('parse_errors', async () => {
    const a = []
    a.push(await fails(sql`selec ${1}`))
    a.push(await fails(sql`selec 1`))
    const settled = await Promise.allSettled([sql`selec ${2}`, sql`select ${3}::int as three`, sql`selec 4`, sql`select 5 as five`])
    a.push(settled.map(s => s.status === 'fulfilled' ? s.value.map(r => ({ ...r })) : err(s.reason)))
    return a
  })

  // LISTEN on a connection of its own (a prepared "listen" statement).
  await step('listen', async () => {
    const l = postgres(url, { ...opts, max: 1 })
    const got = []
    try {
      await l.listen('npm_chan', x => got.push(x))
      await sql.notify('npm_chan', 'one')
      await sql`select pg_notify('npm_chan', ${'two'})`
      for (let i = 0; i < 500 && got.length < 2; i++) await new Promise(r => setTimeout(r, 10))
      return got
    } finally {
      await l.end()
    }
  })

  // Settings from the startup packet (postgres.js's connection option),
  // a statement timeout, and a query cancelled with a CancelRequest.
  await step('settings_cancel', async () => {
    const k = postgres(url, { ...opts, max: 1, connection: { application_name: 'npm js', statement_timeout: 300 } })
    try {
      const a = [rows(await k`select current_setting('application_name') as app, current_setting('statement_timeout') as st`)]
      a.push(await fails(k`select pg_sleep(5)`))
      await k`select set_config('work_mem', '12MB', false)`
      // Cancel once the server runs it: a CancelRequest that comes
      // earlier finds nothing to cancel.
      const q = sql`select pg_sleep(5) as npm_cancel_me`
      const cancelled = fails(q)
      for (let i = 0; i < 500; i++) {
        const [r] = await k`select count(*)::int as n from pg_stat_activity where state = 'active' and query like ${'%npm_cancel_' + 'me%'}`
        if (r.n > 0) break
        await new Promise(r => setTimeout(r, 10))
      }
      q.cancel()
      a.push(await cancelled)
      a.push(rows(await sql`select 1 as after`))
      a.push(rows(await k`select current_setting('work_mem') as wm`))
      return a
    } finally {
      await k.end()
    }
  })

  // sql.begin with prepare: true: BEGIN goes as a simple query, every
  // statement and the COMMIT or ROLLBACK as named prepared statements, so
  // the second transaction reuses the prepared COMMIT.
  await step('begin_commit', async () => {
    const a = []
    for (const n of [1, 2]) {
      a.push(await sql.begin(async tx => {
        await tx`insert into npm_js_log values ('commit', ${n})`
        return rows(await tx`select n from npm_js_log where who = 'commit' order by n`)
      }))
    }
    a.push(rows(await sql`select n from npm_js_log where who = 'commit' order by n`))
    return a
  })
  await step('begin_rollback', async () => {
    const a = []
    for (const n of [1, 2]) {
      try {
        await sql.begin(async tx => {
          await tx`insert into npm_js_log values ('rollback', ${n})`
          throw new Error('roll back ' + n)
        })
      } catch (e) {
        a.push(e.message)
      }
    }
    a.push(rows(await sql`select count(*)::int as n from npm_js_log where who = 'rollback'`))
    return a
  })
  await step('begin_error', async () => {
    const a = []
    a.push(await fails(sql.begin(async tx => {
      await tx`insert into npm_js_log values ('error', 1)`
      await tx`select 1 / ${0}::int`
    })))
    // Pipelined inside the transaction: the error skips the rest.
    a.push(await fails(sql.begin(tx => [
      tx`insert into npm_js_log values ('error', 2)`,
      tx`select ${'abc'}::int`,
      tx`insert into npm_js_log values ('error', 3)`,
    ])))
    a.push(rows(await sql`select count(*)::int as n from npm_js_log where who = 'error'`))
    return a
  })
  await step('savepoint', async () => {
    const a = await sql.begin(async tx => {
      const a = []
      await tx`insert into npm_js_log values ('savepoint', 1)`
      a.push(await tx.savepoint(async sp => {
        await sp`insert into npm_js_log values ('savepoint', 2)`
        return rows(await sp`select count(*)::int as n from npm_js_log where who = 'savepoint'`)
      }))
      try {
        await tx.savepoint('named', async sp => {
          await sp`insert into npm_js_log values ('savepoint', 3)`
          throw new Error('to the savepoint')
        })
      } catch (e) {
        a.push(e.message)
      }
      a.push(await fails(tx.savepoint(async sp => {
        await sp`insert into npm_js_log values ('savepoint', 4)`
        await sp`select 1 / ${0}::int`
      })))
      await tx`insert into npm_js_log values ('savepoint', 5)`
      return a
    })
    a.push(rows(await sql`select n from npm_js_log where who = 'savepoint' order by n`))
    return a
  })

  // Cursors: 1200 rows 100 at a time, alone and inside a transaction,
  // and one left after two batches.
  const readCursor = async (q, stopAfter) => {
    const batches = []
    for await (const b of q.cursor(100)) {
      batches.push([b.length, b[0].id, b[b.length - 1].id, b[b.length - 1].price])
      if (batches.length === stopAfter) break
    }
    return batches
  }
  await step('cursor', () => readCursor(sql`select id, name, price from npm_js_items where id <= ${1200} order by id`))
  await step('cursor_tx', () => sql.begin(async tx => {
    const batches = await readCursor(tx`select id, name, price from npm_js_items where id <= ${1200} order by id`)
    return { batches, after: rows(await tx`select count(*)::int as n from npm_js_items`) }
  }))
  await step('cursor_break', async () => {
    const batches = await readCursor(sql`select id, name, price from npm_js_items order by id desc`, 2)
    return { batches, after: rows(await sql`select 7 as after`) }
  })

  // More connections than the proxy's servers: `max` pooled ones shared
  // by 8 tasks, then 8 clients that connect, commit and leave.
  await step('pool', async () => {
    const many = postgres(url, { ...opts, max })
    const got = await Promise.all(range(workers).map(async w => {
      const a = []
      for (let i = 0; i < 6; i++) {
        const [r] = await many`select name, price from npm_js_items where id = ${w * 100 + i + 1}`
        a.push([r.name, r.price])
      }
      a.push(await many.begin(async tx => {
        await tx`insert into npm_js_log values ('pool', ${w})`
        const [r] = await tx`select count(*)::int as n from npm_js_log where who = 'pool' and n = ${w}`
        return r.n
      }))
      return a
    }))
    await many.end()
    return got
  })
  await step('clients', async () => {
    const got = await Promise.all(range(workers).map(async w => {
      const one = postgres(url, { ...opts, max: 1 })
      try {
        return await one.begin(async tx => {
          await tx`insert into npm_js_log values ('client', ${w})`
          return [...await tx`select name from npm_js_items where id = ${w + 1}`]
        })
      } finally {
        await one.end()
      }
    }))
    return { got, after: rows(await sql`select count(*)::int as n, sum(n)::int as s from npm_js_log where who = 'client'`) }
  })

  await sql.end()
}

// ---- messages over 1 MiB, both clients ----

async function runLarge() {
  const pg = require('pg')
  const postgres = require('postgres')
  const crypto = require('crypto')
  const md5 = x => crypto.createHash('md5').update(x).digest('hex')
  const big = 'x'.repeat(2 << 20) + 'y'
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  const sql = postgres(url, { onnotice: () => {}, max: 1 })
  const check = 'select length($1::text) as n, md5($1::text) as m'
  await step('pg_param', async () => (await c.query(check, [big])).rows)
  await step('pg_simple', async () => (await c.query(`select length('${big}') as n`)).rows)
  await step('pg_row', async () => {
    const r = (await c.query("select repeat('z', 3000000) || 'end' as v")).rows[0].v
    return [r.length, md5(r)]
  })
  await step('js_param', async () => [...await sql.unsafe(check, [big], { prepare: true })])
  await step('js_insert', async () => {
    await sql`drop table if exists npm_large`
    await sql`create table npm_large (b bytea)`
    await sql`insert into npm_large values (${Buffer.alloc(3 << 20, 7)})`
    return [...await sql`select length(b) as n, md5(b) as m from npm_large`]
  })
  await sql.end()
  await c.end()
}

const scenarios = { pg: runPg, postgres: runPostgres, large: runLarge }

async function main() {
  if (!url) throw new Error('NPM_PG_URL is not set')
  const run = scenarios[scenario]
  if (!run) throw new Error('usage: node clients.js ' + Object.keys(scenarios).join('|'))
  const t = setTimeout(() => {
    process.stderr.write(`timed out in step ${current}\n`)
    process.exit(1)
  }, 60000)
  await run()
  clearTimeout(t)
  const lines = Object.entries(out).map(([k, v]) => JSON.stringify(k) + ': ' + JSON.stringify(v))
  process.stdout.write('{\n' + lines.join(',\n') + '\n}\n')
}

main().catch(e => {
  process.stderr.write(`step ${current}: ${e && e.stack || e}\n`)
  if (e && e.code) process.stderr.write(JSON.stringify(e) + '\n')
  process.exit(1)
})
