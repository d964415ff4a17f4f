// Latency of K postgres.js queries in flight on one connection, N rounds;
// prints the median and 90th percentile of a round's time.
//
//   NODE_PATH=<the npm test's node_modules> node pipeline-bench.js URL MODE [K] [N]
//
// MODE unnamed: prepare: false (each query Parse, Describe, Flush first,
// then Bind, Execute, Sync: postgres.js does not know the parameter types);
// new: prepare: true with texts never seen before (named statements);
// reuse: prepare: true with the same K texts every round.
// docs/benchmarks.md, "postgres.js and pipelined groups".
const postgres = require('postgres')
const [url, mode, K, N] = [process.argv[2], process.argv[3], +process.argv[4] || 10, +process.argv[5] || 500]
;(async () => {
  const sql = postgres(url, { max: 1, prepare: mode !== 'unnamed', fetch_types: false, onnotice: () => {} })
  await sql`select 1`
  const ds = []
  for (let r = 0; r < N; r++) {
    const t = process.hrtime.bigint()
    const qs = []
    for (let j = 0; j < K; j++) {
      const c = mode === 'new' ? r * 1000 + j : j
      qs.push(sql.unsafe(`select $1::int + ${c} as v`, [j]))
    }
    await Promise.all(qs)
    ds.push(Number(process.hrtime.bigint() - t) / 1000)
  }
  ds.sort((a, b) => a - b)
  const q = p => ds[Math.floor(ds.length * p)].toFixed(0)
  console.log(`${mode} k=${K} n=${N} p50=${q(0.5)}us p90=${q(0.9)}us`)
  await sql.end()
})().catch(e => { console.error(e); process.exit(1) })
