// Initial states and per-row draw counts of dbgen's 48 column streams.

package tpch

// Stream ids, named after the columns they feed (dbgen's *_SD constants).
const (
	sdPMfg     = 0
	sdPBrnd    = 1
	sdPType    = 2
	sdPSize    = 3
	sdPCntr    = 4
	sdText     = 5 // text pool pre-generation
	sdPCmnt    = 6
	sdPsQty    = 7
	sdPsScst   = 8
	sdPsCmnt   = 9
	sdOSupp    = 10
	sdOClrk    = 11
	sdOCmnt    = 12
	sdOOdate   = 13
	sdLQty     = 14
	sdLDcnt    = 15
	sdLTax     = 16
	sdLShip    = 17
	sdLSmode   = 18
	sdLPkey    = 19
	sdLSkey    = 20
	sdLSdte    = 21
	sdLCdte    = 22
	sdLRdte    = 23
	sdLRflg    = 24
	sdLCmnt    = 25
	sdCAddr    = 26
	sdCNtrg    = 27
	sdCPhne    = 28
	sdCAbal    = 29
	sdCMseg    = 30
	sdCCmnt    = 31
	sdSAddr    = 32
	sdSNtrg    = 33
	sdSPhne    = 34
	sdSAbal    = 35
	sdSCmnt    = 36
	sdPName    = 37
	sdOPrio    = 38
	sdOCkey    = 40
	sdNCmnt    = 41
	sdRCmnt    = 42
	sdOLcnt    = 43
	sdBbbJnk   = 44
	sdBbbType  = 45
	sdBbbCmnt  = 46
	sdBbbOffst = 47
)

// seedDef is a stream's state before the first row and the number of draws
// reserved for it per row (of the parent table: per order for lineitem,
// per part for partsupp).
type seedDef struct {
	value    int64
	boundary int64
}

// seeds are dbgen 2.14.0's starting values; they define the data set.
var seeds = [48]seedDef{
	{1, 1}, {46831694, 1}, {1841581359, 1}, {1193163244, 1}, {727633698, 1},
	{933588178, 1}, {804159733, 2}, {1671059989, 4}, {1051288424, 4}, {1961692154, 8},
	{1227283347, 1}, {1171034773, 1}, {276090261, 2}, {1066728069, 1}, {209208115, 7},
	{554590007, 7}, {721958466, 7}, {1371272478, 7}, {675466456, 7}, {1808217256, 7},
	{2095021727, 7}, {1769349045, 7}, {904914315, 7}, {373135028, 7}, {717419739, 7},
	{1095462486, 14}, {881155353, 9}, {1489529863, 1}, {1521138112, 3}, {298370230, 1},
	{1140279430, 1}, {1335826707, 2}, {706178559, 9}, {110356601, 1}, {884434366, 3},
	{962338209, 1}, {1341315363, 2}, {709314158, 92}, {591449447, 1}, {431918286, 1},
	{851767375, 1}, {606179079, 2}, {1500869201, 2}, {1434868289, 1}, {263032577, 1},
	{753643799, 1}, {202794285, 1}, {715851524, 1},
}
