// Function allowlist: the built-in functions a validated statement may call.

package safesql

import "strings"

// builtinFunctions lists PostgreSQL built-in functions (pg_catalog) that
// only compute a value or read catalog and statistics data: no writes,
// no locks, no sleeping, no file or network access, no session state
// changes, and no execution of SQL text passed as an argument. A name is
// allowed unqualified or qualified with pg_catalog. Everything else,
// including every user-defined function, is refused unless the operator
// adds it with Options.AllowFunctions.
//
// Not listed either: names of SQL syntax and of types (coalesce, nullif,
// greatest, least, grouping, current_date and the other SQL value
// functions, user, the xml* constructors, inet and the reg* types other
// than regclass). Unquoted, the parser makes them a syntax node or a cast,
// never a call; quoted ("coalesce"(1)) they are a call, and as PostgreSQL
// 15's pg_catalog has no function of that name, a user function on the
// search_path would answer it.
//
// Deliberately absent (refused): pg_sleep*, set_config, dblink*, lo_*,
// pg_read_file, pg_read_binary_file, pg_ls_*dir, pg_stat_file,
// pg_terminate_backend, pg_cancel_backend, pg_advisory_* and
// pg_try_advisory_*, nextval, setval, currval, lastval, txid_current*,
// pg_current_xact_id*, pg_reload_conf, pg_rotate_logfile, pg_switch_wal,
// pg_create_*_replication_slot, pg_drop_replication_slot, pg_logical_*,
// query_to_xml and the rest of the *_to_xml family, ts_stat, ts_rewrite,
// pg_notify, pg_stat_reset*, setseed, pg_input_is_valid (it runs the input
// function of a type named in a string), and the functions that read
// server files (pg_hba_file_rules, pg_current_logfile, pg_control_*);
// xpath, xpath_exists and xmlexists (and XMLTABLE): libxml2 evaluates an
// XPath without checking for interrupts, so statement_timeout cannot stop
// an expression whose cost grows with the cube of the document.
var builtinFunctions = wordSet(`
abs cbrt ceil ceiling degrees div exp factorial floor gcd lcm ln log log10
min_scale mod pi power radians round scale sign sqrt trim_scale trunc
width_bucket random random_normal erf erfc
acos acosd asin asind atan atan2 atan2d atand cos cosd cot cotd sin sind tan tand
sinh cosh tanh asinh acosh atanh
    
ascii bit_length btrim char_length character_length chr concat concat_ws
format initcap left length lower lpad ltrim md5 normalize is_normalized
octet_length overlay parse_ident position quote_ident quote_literal
quote_nullable regexp_count regexp_instr regexp_like regexp_match
regexp_matches regexp_replace regexp_split_to_array regexp_split_to_table
regexp_substr repeat replace reverse right rpad rtrim split_part
starts_with string_to_array string_to_table strpos substr substring
to_ascii to_hex to_bin to_oct translate unistr upper casefold
similar_to_escape similar_escape like_escape
encode decode convert convert_from convert_to get_bit get_byte set_bit set_byte
bit_count sha224 sha256 sha384 sha512 crc32 crc32c string_agg
to_char to_date to_number to_timestamp
age clock_timestamp date_add
date_bin date_part date_subtract date_trunc extract isfinite justify_days
justify_hours justify_interval make_date
make_interval make_time make_timestamp make_timestamptz now
statement_timestamp timeofday transaction_timestamp timezone overlaps
daterange tsrange tstzrange int4range int8range numrange
datemultirange tsmultirange tstzmultirange int4multirange int8multirange nummultirange
lower_inc upper_inc lower_inf upper_inf isempty range_merge multirange range_agg range_intersect_agg
array_append array_cat array_dims array_fill array_length array_lower
array_ndims array_position array_positions array_prepend array_remove
array_replace array_sample array_shuffle array_to_string array_upper
cardinality trim_array unnest generate_subscripts array_agg array_reverse array_sort
generate_series
to_json to_jsonb array_to_json row_to_json json_build_array jsonb_build_array
json_build_object jsonb_build_object json_object jsonb_object
json_array_elements jsonb_array_elements json_array_elements_text
jsonb_array_elements_text json_array_length jsonb_array_length json_each
jsonb_each json_each_text jsonb_each_text json_extract_path
jsonb_extract_path json_extract_path_text jsonb_extract_path_text
json_object_keys jsonb_object_keys json_populate_record
jsonb_populate_record jsonb_populate_record_valid json_populate_recordset jsonb_populate_recordset
json_to_record jsonb_to_record json_to_recordset jsonb_to_recordset
json_strip_nulls jsonb_strip_nulls jsonb_set jsonb_set_lax jsonb_insert
jsonb_pretty json_typeof jsonb_typeof jsonb_path_exists jsonb_path_match
jsonb_path_query jsonb_path_query_array jsonb_path_query_first
jsonb_path_exists_tz jsonb_path_match_tz jsonb_path_query_tz
jsonb_path_query_array_tz jsonb_path_query_first_tz json_agg jsonb_agg
json_object_agg jsonb_object_agg json_agg_strict jsonb_agg_strict
json_object_agg_strict jsonb_object_agg_strict json_object_agg_unique
jsonb_object_agg_unique json_object_agg_unique_strict jsonb_object_agg_unique_strict
jsonb_concat jsonb_delete jsonb_delete_path jsonb_contains jsonb_exists jsonb_exists_any jsonb_exists_all
json_scalar json_serialize
avg bit_and bit_or bit_xor bool_and bool_or count every max min sum
corr covar_pop covar_samp regr_avgx regr_avgy regr_count regr_intercept
regr_r2 regr_slope regr_sxx regr_sxy regr_syy stddev stddev_pop
stddev_samp variance var_pop var_samp mode percentile_cont
percentile_disc rank dense_rank percent_rank cume_dist any_value xmlagg
row_number ntile lag lead first_value last_value nth_value
to_tsvector to_tsquery plainto_tsquery phraseto_tsquery websearch_to_tsquery
array_to_tsvector tsvector_to_array setweight strip ts_delete ts_filter
ts_headline ts_rank ts_rank_cd tsquery_phrase numnode querytree
json_to_tsvector jsonb_to_tsvector ts_lexize ts_debug ts_parse ts_token_type get_current_ts_config
area center diagonal diameter height isclosed isopen npoints pclose popen
radius width box circle line lseg path point polygon bound_box
inet_merge inet_same_family abbrev broadcast family host hostmask masklen
netmask network set_masklen text cidr macaddr8_set7bit trunc
gen_random_uuid uuid_extract_timestamp uuid_extract_version uuidv4 uuidv7
num_nulls num_nonnulls
bool int2 int4 int8 float4 float8 numeric date time timestamp timestamptz
interval varchar bpchar char name oid regclass
to_regclass to_regtype to_regtypemod to_regproc to_regprocedure to_regoper
to_regoperator to_regnamespace to_regrole to_regcollation
xmlcomment
xml_is_well_formed xml_is_well_formed_document
xml_is_well_formed_content xmltext
current_database current_query current_schema
current_schemas current_user session_user system_user
inet_client_addr inet_client_port inet_server_addr inet_server_port
pg_backend_pid pg_blocking_pids pg_conf_load_time
pg_is_other_temp_schema pg_jit_available pg_my_temp_schema
pg_postmaster_start_time pg_safe_snapshot_blocking_pids
pg_trigger_depth version current_setting pg_settings_get_flags
has_any_column_privilege has_column_privilege has_database_privilege
has_foreign_data_wrapper_privilege has_function_privilege
has_language_privilege has_parameter_privilege has_schema_privilege
has_sequence_privilege has_server_privilege has_table_privilege
has_tablespace_privilege has_type_privilege pg_has_role row_security_active
acldefault aclexplode makeaclitem
pg_collation_is_visible pg_conversion_is_visible pg_function_is_visible
pg_opclass_is_visible pg_operator_is_visible pg_opfamily_is_visible
pg_statistics_obj_is_visible pg_table_is_visible pg_ts_config_is_visible
pg_ts_dict_is_visible pg_ts_parser_is_visible pg_ts_template_is_visible
pg_type_is_visible
format_type pg_basetype pg_char_to_encoding pg_encoding_to_char
pg_get_catalog_foreign_keys pg_get_constraintdef pg_get_expr
pg_get_functiondef pg_get_function_arguments
pg_get_function_identity_arguments pg_get_function_result
pg_get_indexdef pg_get_keywords pg_get_partkeydef pg_get_ruledef
pg_get_serial_sequence pg_get_statisticsobjdef pg_get_triggerdef
pg_get_userbyid pg_get_viewdef pg_get_wal_replay_pause_state pg_index_column_has_property
pg_index_has_property pg_indexam_has_property pg_options_to_table
pg_settings_get_flags pg_tablespace_databases pg_tablespace_location
pg_typeof pg_collation_for pg_describe_object pg_identify_object
pg_identify_object_as_address pg_get_object_address
col_description obj_description shobj_description
pg_get_function_arg_default pg_get_function_sqlbody pg_get_publication_tables
pg_column_compression pg_column_size pg_column_toast_chunk_id
pg_database_size pg_indexes_size pg_relation_size pg_size_bytes
pg_size_pretty pg_table_size pg_tablespace_size pg_total_relation_size
pg_relation_filenode pg_relation_filepath pg_filenode_relation
pg_partition_ancestors pg_partition_root pg_partition_tree
pg_is_in_recovery pg_last_wal_receive_lsn pg_last_wal_replay_lsn
pg_last_xact_replay_timestamp pg_is_wal_replay_paused pg_current_wal_lsn
pg_current_wal_insert_lsn pg_current_wal_flush_lsn pg_wal_lsn_diff pg_walfile_name
pg_walfile_name_offset pg_split_walfile_name
pg_stat_get_activity pg_stat_get_backend_idset pg_stat_get_numscans
pg_stat_get_tuples_returned pg_stat_get_tuples_fetched pg_stat_get_live_tuples
pg_stat_get_dead_tuples pg_stat_get_db_numbackends pg_stat_get_progress_info
pg_lock_status pg_prepared_xact pg_show_all_settings
pg_timezone_names pg_timezone_abbrevs
pg_available_extensions pg_available_extension_versions pg_cursor
pg_prepared_statement
    
pg_get_replication_slots pg_stat_get_wal_senders pg_stat_get_subscription
pg_visible_in_snapshot pg_xact_status pg_snapshot_xip pg_snapshot_xmax
pg_snapshot_xmin txid_visible_in_snapshot txid_status txid_snapshot_xip
txid_snapshot_xmax txid_snapshot_xmin pg_xact_commit_timestamp pg_last_committed_xact
pg_get_multixact_members pg_mcv_list_items pg_get_wal_resource_managers
pg_sequence_parameters pg_get_object_address
pg_client_encoding getdatabaseencoding pg_encoding_max_length
pg_listening_channels pg_current_snapshot txid_current_snapshot pg_notification_queue_usage
pg_numa_available pg_get_acl
`)

// wordSet turns a whitespace-separated word list into a set.
func wordSet(words string) map[string]bool {
	set := make(map[string]bool)
	for _, w := range strings.Fields(words) {
		set[w] = true
	}
	return set
}

// builtinOperators are the operator names pg_catalog has in PostgreSQL
// 15 (select distinct oprname from pg_operator where oprnamespace =
// 'pg_catalog'::regnamespace), and the names the parser gives BETWEEN.
// An unqualified name outside it resolves to a user-defined operator on
// the search_path (TestOperatorsOfPostgreSQL checks the list).
var builtinOperators = func() map[string]bool {
	m := map[string]bool{"BETWEEN": true, "NOT BETWEEN": true, "BETWEEN SYMMETRIC": true, "NOT BETWEEN SYMMETRIC": true}
	for _, op := range strings.Fields(`!! !~ !~* !~~ !~~* # ## #- #> #>> % & && &< &<| &> * *< *<= *<> *= *> *>= + - -> ->> -|- / < <-> << <<= <<| <= <> <@ <^ = > >= >> >>= >^ ? ?# ?& ?- ?-| ?| ?|| @ @-@ @> @? @@ @@@ ^ ^@ | |&> |/ |>> || ||/ ~ ~* ~<=~ ~<~ ~= ~>=~ ~>~ ~~ ~~*`) {
		m[op] = true
	}
	return m
}()

// functionSince are the allowlisted functions newer than PostgreSQL 15,
// by the server_version_num of the release that brought them (the
// allowlisted names PostgreSQL 15's pg_catalog lacks, less the names of
// syntax and types): an older server has no such function, and a user
// function of that name on its search_path would answer the call.
var functionSince = func() map[string]int {
	m := map[string]int{}
	for v, names := range map[int]string{
		160000: `any_value array_sample array_shuffle date_add date_subtract erf erfc json_agg_strict
			json_object_agg_strict json_object_agg_unique json_object_agg_unique_strict jsonb_agg_strict
			jsonb_object_agg_strict jsonb_object_agg_unique jsonb_object_agg_unique_strict
			pg_split_walfile_name random_normal system_user`,
		170000: `json_scalar json_serialize jsonb_populate_record_valid pg_basetype pg_column_toast_chunk_id
			to_bin to_oct to_regtypemod uuid_extract_timestamp uuid_extract_version xmltext`,
		180000: `array_reverse array_sort casefold crc32 crc32c pg_get_acl pg_numa_available uuidv4 uuidv7`,
	} {
		for _, n := range strings.Fields(names) {
			m[n] = v
		}
	}
	return m
}()

// fileViews are the system views that read server files (pg_hba.conf,
// pg_ident.conf, postgresql.conf and its includes, with any password in
// primary_conninfo) through functions refused by name: a superuser, or
// a role granted them, would read the files through the view.
var fileViews = map[string]bool{"pg_hba_file_rules": true, "pg_ident_file_mappings": true, "pg_file_settings": true}

// checkRelation refuses a table reference to one of fileViews, written
// bare (which a search_path could resolve elsewhere; refused anyway) or
// in pg_catalog.
func checkRelation(schema, rel string, pos int) *Refusal {
	if fileViews[rel] && (schema == "" || schema == "pg_catalog") {
		return refuse(pos, rel, "relation "+rel+" is not allowed (it reads server configuration files)")
	}
	return nil
}
