// PostgreSQL schema for the TPC-H tables: CREATE TABLE and post-load constraints.

package tpch

// SchemaSQL creates the eight tables with the specification's column types.
// Keys are integer except the order keys, which outgrow 32 bits from about
// SF 360 on because dbgen spreads them sparsely; every other key fits an
// integer up to SF 10000.
const SchemaSQL = `CREATE TABLE nation (
	n_nationkey integer NOT NULL,
	n_name char(25) NOT NULL,
	n_regionkey integer NOT NULL,
	n_comment varchar(152) NOT NULL
);

CREATE TABLE region (
	r_regionkey integer NOT NULL,
	r_name char(25) NOT NULL,
	r_comment varchar(152) NOT NULL
);

CREATE TABLE part (
	p_partkey integer NOT NULL,
	p_name varchar(55) NOT NULL,
	p_mfgr char(25) NOT NULL,
	p_brand char(10) NOT NULL,
	p_type varchar(25) NOT NULL,
	p_size integer NOT NULL,
	p_container char(10) NOT NULL,
	p_retailprice decimal(15,2) NOT NULL,
	p_comment varchar(23) NOT NULL
);

CREATE TABLE supplier (
	s_suppkey integer NOT NULL,
	s_name char(25) NOT NULL,
	s_address varchar(40) NOT NULL,
	s_nationkey integer NOT NULL,
	s_phone char(15) NOT NULL,
	s_acctbal decimal(15,2) NOT NULL,
	s_comment varchar(101) NOT NULL
);

CREATE TABLE partsupp (
	ps_partkey integer NOT NULL,
	ps_suppkey integer NOT NULL,
	ps_availqty integer NOT NULL,
	ps_supplycost decimal(15,2) NOT NULL,
	ps_comment varchar(199) NOT NULL
);

CREATE TABLE customer (
	c_custkey integer NOT NULL,
	c_name varchar(25) NOT NULL,
	c_address varchar(40) NOT NULL,
	c_nationkey integer NOT NULL,
	c_phone char(15) NOT NULL,
	c_acctbal decimal(15,2) NOT NULL,
	c_mktsegment char(10) NOT NULL,
	c_comment varchar(117) NOT NULL
);

CREATE TABLE orders (
	o_orderkey bigint NOT NULL,
	o_custkey integer NOT NULL,
	o_orderstatus char(1) NOT NULL,
	o_totalprice decimal(15,2) NOT NULL,
	o_orderdate date NOT NULL,
	o_orderpriority char(15) NOT NULL,
	o_clerk char(15) NOT NULL,
	o_shippriority integer NOT NULL,
	o_comment varchar(79) NOT NULL
);

CREATE TABLE lineitem (
	l_orderkey bigint NOT NULL,
	l_partkey integer NOT NULL,
	l_suppkey integer NOT NULL,
	l_linenumber integer NOT NULL,
	l_quantity decimal(15,2) NOT NULL,
	l_extendedprice decimal(15,2) NOT NULL,
	l_discount decimal(15,2) NOT NULL,
	l_tax decimal(15,2) NOT NULL,
	l_returnflag char(1) NOT NULL,
	l_linestatus char(1) NOT NULL,
	l_shipdate date NOT NULL,
	l_commitdate date NOT NULL,
	l_receiptdate date NOT NULL,
	l_shipinstruct char(25) NOT NULL,
	l_shipmode char(10) NOT NULL,
	l_comment varchar(44) NOT NULL
);
`

// ConstraintsSQL is what to run after loading: primary keys, foreign keys
// and the indexes the queries rely on. It is kept apart from SchemaSQL
// because building them once after a bulk load is much faster than
// maintaining them row by row.
const ConstraintsSQL = `ALTER TABLE region ADD CONSTRAINT region_pkey PRIMARY KEY (r_regionkey);
ALTER TABLE nation ADD CONSTRAINT nation_pkey PRIMARY KEY (n_nationkey);
ALTER TABLE part ADD CONSTRAINT part_pkey PRIMARY KEY (p_partkey);
ALTER TABLE supplier ADD CONSTRAINT supplier_pkey PRIMARY KEY (s_suppkey);
ALTER TABLE partsupp ADD CONSTRAINT partsupp_pkey PRIMARY KEY (ps_partkey, ps_suppkey);
ALTER TABLE customer ADD CONSTRAINT customer_pkey PRIMARY KEY (c_custkey);
ALTER TABLE orders ADD CONSTRAINT orders_pkey PRIMARY KEY (o_orderkey);
-- also serves lookups by l_orderkey alone
ALTER TABLE lineitem ADD CONSTRAINT lineitem_pkey PRIMARY KEY (l_orderkey, l_linenumber);

ALTER TABLE nation ADD CONSTRAINT nation_region_fkey FOREIGN KEY (n_regionkey) REFERENCES region;
ALTER TABLE supplier ADD CONSTRAINT supplier_nation_fkey FOREIGN KEY (s_nationkey) REFERENCES nation;
ALTER TABLE customer ADD CONSTRAINT customer_nation_fkey FOREIGN KEY (c_nationkey) REFERENCES nation;
ALTER TABLE partsupp ADD CONSTRAINT partsupp_part_fkey FOREIGN KEY (ps_partkey) REFERENCES part;
ALTER TABLE partsupp ADD CONSTRAINT partsupp_supplier_fkey FOREIGN KEY (ps_suppkey) REFERENCES supplier;
ALTER TABLE orders ADD CONSTRAINT orders_customer_fkey FOREIGN KEY (o_custkey) REFERENCES customer;
ALTER TABLE lineitem ADD CONSTRAINT lineitem_orders_fkey FOREIGN KEY (l_orderkey) REFERENCES orders;
ALTER TABLE lineitem ADD CONSTRAINT lineitem_partsupp_fkey FOREIGN KEY (l_partkey, l_suppkey) REFERENCES partsupp;

-- Q17 and Q20 look up line items by part and supplier; without this
-- index Q17 runs for minutes at SF 1.
CREATE INDEX lineitem_part_supp_idx ON lineitem (l_partkey, l_suppkey);
CREATE INDEX orders_custkey_idx ON orders (o_custkey);
`
