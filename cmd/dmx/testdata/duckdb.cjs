// duckdb.cjs runs one SQL query (argv[2]) in DuckDB, in memory, and prints
// its rows as a JSON array: the second reader of the Parquet export
// (TestParquetDuckDB). NODE_PATH names the node_modules that holds
// @duckdb/node-api.
const { DuckDBInstance } = require('@duckdb/node-api');
(async () => {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const r = await c.runAndReadAll(process.argv[2]);
  console.log(JSON.stringify(r.getRowObjectsJson()));
})().catch(e => { console.error(e.message); process.exit(1); });
