// tune_options.cpp: parsing `gemm tune` arguments.
#include "tune_options.hpp"

#include "cli_args.hpp"

namespace gemm_cli {

const char *const tune_help =
    "usage: gemm tune [SHAPE...] [--shapes FILE] [--suite default|quick] [options]\n"
    "       gemm tune --verify [--drop] [--budget-ms X] [--device N] [--cache FILE] [--json FILE]\n"
    "\n"
    "Times every (backend, variant) that can serve each problem, checks each result against\n"
    "a reference (a wrong one is rejected), and stores the winner in the tune cache, where\n"
    "the library's automatic choice (GEMM_BACKEND=auto) finds it. The built-in default stays\n"
    "unless a candidate beats it by more than 2%.\n"
    "\n"
    "problems (any combination; each problem is tuned once):\n"
    "  SHAPE               N (N x N x N) or MxNxK, in every --dtype, --layout and --ops\n"
    "  --dtype LIST        f32,f64,f16,bf16,c32,c64,e4m3,e5m2 (default f32); f16/bf16 with C of\n"
    "                      the same type; c32/c64 are complex; e4m3/e5m2 (FP8) with C bf16;\n"
    "                      T>U: A and B of type T, C of type U\n"
    "                      ('bf16>f32', quoted for the shell)\n"
    "  --layout LIST       row,col (default row)\n"
    "  --ops LIST          NN,NT,TN,TT: op(A) then op(B) (default NN); C, the conjugate\n"
    "                      transpose, with c32/c64 (CN, NC, CT, ...)\n"
    "  --batch N           strided batch of N products (default 1)\n"
    "  --beta-nonzero      tune calls with beta != 0 (default: beta = 0, C not read)\n"
    "  --scale MODE        FP8 dtypes only: none (the default) or tensor, the class of unscaled\n"
    "                      calls (per-tensor scales only multiply alpha); block, the class of\n"
    "                      block-scaled calls (1x128 blocks of A, 128x128 of B), measured and\n"
    "                      checked with block scales\n"
    "  --shapes FILE       one problem a line, either\n"
    "                        DTYPE LAYOUT OPS M N K [BATCH]       f32 row NT 128 4096 4096 1\n"
    "                      or a line GEMM_RECORD=FILE wrote for a shape the cache lacked\n"
    "                        f32 f32 NN 1024 1024 1024 batch=1 ld=tight align=16 space=host beta=0\n"
    "                      or, naming a call beside GEMM first, a transpose (gemm_omatcopy) or a\n"
    "                      sparse product (gemm_spmm_csr, gemm_spmm_coo; DENSITY = nnz / (rows x\n"
    "                      cols) of A, keyed by its nearest power of 10), host memory unless the\n"
    "                      line ends in device (then on --device N, default 0)\n"
    "                        omatcopy DTYPE LAYOUT OP ROWS COLS [device]   omatcopy f32 row T 4096 4096\n"
    "                        spmm_csr DTYPE LAYOUT OPS M N K DENSITY [device]\n"
    "                                                 spmm_csr f32 row NN 16384 64 16384 0.01\n"
    "                      or such a call's tune-cache key, as --verify lists it\n"
    "                        omatcopy f32 T 4096 4096 space=host\n"
    "                        spmm_csr f32 row NN 16384 64 16384 density=1e-2 space=host beta=0\n"
    "                      (blank lines and # comments are skipped). Their candidates are every\n"
    "                      backend that serves the call (they have no variants), each result\n"
    "                      checked against cpu_ref: bit for bit for a transpose, within the\n"
    "                      tolerance of a GEMM of k terms for a sparse product\n"
    "  --suite NAME        default: square 128..4096, odd sizes, LLM-like skinny shapes\n"
    "                      (m = 1..16, n, k in {4096, 11008}) and K-heavy ones, for the dtypes\n"
    "                      the host backends serve; f32 transposes (N and T) of 1024^2 and\n"
    "                      4096^2 and a CSR product 4096^2 at 1 % by 64 columns; with a CUDA\n"
    "                      device also device-pointer problems in f32 and bf16 up to 8192 and\n"
    "                      those transposes and that product on device memory. quick: a handful\n"
    "                      of small GEMM shapes (seconds).\n"
    "tuning:\n"
    "  --budget-ms X       time for all candidates of one problem (default 2000); a candidate\n"
    "                      is always checked and run at least 3 times, so large shapes take longer\n"
    "  --backends LIST     consider only these backends, by name: every variant of each is\n"
    "                      timed (the built-in default is always timed)\n"
    "  --device N          argument and suite problems on device pointers of CUDA device N;\n"
    "                      device lines of --shapes files use N too (default 0)\n"
    "  --no-store          report only; the cache is left as it is\n"
    "  --cache FILE        the tune cache to read and write (sets GEMM_TUNE_CACHE for this run;\n"
    "                      default: $GEMM_TUNE_CACHE, else $XDG_CACHE_HOME/gemm/tune-cache.txt,\n"
    "                      else ~/.cache/gemm/tune-cache.txt)\n"
    "verifying the cache:\n"
    "  --verify            measure every entry of the tune cache again: its stored choice against\n"
    "                      the built-in rule's choice now (what auto would run without the entry),\n"
    "                      head to head in 3 rounds within --budget-ms, each result checked; an\n"
    "                      entry holds when its choice is correct and at most 2% slower. Entries\n"
    "                      that store the built-in choice itself hold without being measured.\n"
    "                      Device entries run on --device N (default 0).\n"
    "  --drop              with --verify: remove the entries that do not hold from the cache (auto\n"
    "                      then treats their shapes as untuned)\n"
    "output:\n"
    "  --verbose           list every candidate with its median time or why it was rejected\n"
    "  --json FILE         every problem (its candidates, winner, default, times, whether it\n"
    "                      was stored, its error) and the summary as JSON; FILE '-' writes it\n"
    "                      to stdout in place of the table\n"
    "\n"
    "Progress goes to stderr (a bar on a terminal, else one line per problem), with the time\n"
    "elapsed and an estimate of the time left (the mean time of the problems done times the\n"
    "problems left); the table, the cache path, the number of entries stored and the\n"
    "geometric-mean speed-up over the default to stdout.\n"
    "\n"
    "Exit code: 0; 1 when some problem could not be tuned (the others still are), a backend\n"
    "named by --backends cannot run here (nothing is tuned) or is a candidate for none of the\n"
    "problems, there is nothing to tune (a --shapes file without problems, a suite with none\n"
    "for this machine) or the GEMM_* configuration is invalid; 2 for a bad command line (a\n"
    "backend not in this build too) or --shapes file. The reason for a 1 is on stderr.\n"
    "With --verify: 0 when every entry holds or was dropped; 1 when one does not hold and was\n"
    "kept, or could not be measured.\n";

namespace {

std::string suite_parse(const std::string &text) {
    if (text == "default" || text == "quick") return text;
    throw usage_error("--suite: unknown suite '" + text + "' (default, quick)");
}

// Names only: the tuner times every variant of each backend it considers.
std::string backends_parse(const std::string &text) {
    if (text.empty()) throw usage_error("--backends needs at least one name");
    list_parse<std::string>("--backends", text, [](const std::string &name, const std::string &option) {
        if (name.find(':') != std::string::npos)
            throw usage_error(option + ": '" + name + "': give backend names; the tuner times every variant");
        return name;
    });
    return text;
}

std::string path_parse(const std::string &text, const std::string &option) {
    if (text.empty()) throw usage_error(option + " needs a file name");
    return text;
}

// Options that choose or shape the problems to tune, which --verify does not take.
bool tuning_only(const std::string &name) {
    for (const char *o : {"--dtype", "--layout", "--ops", "--batch", "--shapes", "--suite", "--backends", "--no-store",
                          "--beta-nonzero", "--scale", "--verbose", "-v"})
        if (name == o) return true;
    return false;
}

bool parse_valued_option(const std::string &name, arg_reader &args, tune_options &o) {
    if (name == "--dtype") o.dtypes = list_parse<dtype_pair>(name, args.value(name), dtype_pair_parse);
    else if (name == "--layout") o.layouts = list_parse<gemm_layout_t>(name, args.value(name), layout_parse);
    else if (name == "--ops") o.ops = list_parse<op_pair>(name, args.value(name), ops_parse);
    else if (name == "--batch") o.batch = parse_int(args.value(name), name, 1);
    else if (name == "--scale") o.scale = scale_parse(args.value(name));
    else if (name == "--shapes") o.shapes_file = args.value(name);
    else if (name == "--suite") o.suite = suite_parse(args.value(name));
    else if (name == "--budget-ms") o.budget_ms = positive_parse(args.value(name), name);
    else if (name == "--backends") o.backends = backends_parse(args.value(name));
    else if (name == "--device") o.device = int(parse_int(args.value(name), name, 0));
    else if (name == "--cache") o.cache_path = path_parse(args.value(name), name);
    else if (name == "--json") o.json_path = path_parse(args.value(name), name);
    else return false;
    return true;
}

}  // namespace

tune_options tune_options_parse(int argc, char **argv, int first) {
    tune_options o;
    std::string tuning_option;  // one that --verify does not take, if given
    arg_reader args(argc, argv, first);
    while (!args.done()) {
        std::string arg = args.take();
        if (tuning_only(arg) && tuning_option.empty()) tuning_option = arg;
        if (parse_valued_option(arg, args, o)) continue;
        args.reject_value(arg);
        if (arg == "--help" || arg == "-h") o.show_help = true;
        else if (arg == "--no-store") o.store = false;
        else if (arg == "--verbose" || arg == "-v") o.verbose = true;
        else if (arg == "--beta-nonzero") o.beta_zero = false;
        else if (arg == "--verify") o.verify = true;
        else if (arg == "--drop") o.drop = true;
        else if (!arg.empty() && arg[0] == '-') throw usage_error("unknown option '" + arg + "'");
        else o.shapes.push_back(shape_parse(arg));
    }
    if (o.drop && !o.verify) throw usage_error("--drop goes with --verify");
    if (o.verify && !o.shapes.empty()) throw usage_error("--verify checks the cache's entries: it takes no shapes");
    if (o.verify && !tuning_option.empty())
        throw usage_error("--verify checks the cache's entries: " + tuning_option + " is for tuning");
    if (!o.show_help && !o.verify && o.shapes.empty() && o.shapes_file.empty() && o.suite.empty())
        throw usage_error("nothing to tune: give shapes, --shapes FILE or --suite NAME");
    scale_check(o.scale, o.dtypes);
    if (o.scale != GEMM_SCALE_NONE && o.shapes.empty())
        throw usage_error("--scale applies to shapes given as arguments (a --shapes file's recorded lines end in "
                          "scales= for block scales)");
    return o;
}

}  // namespace gemm_cli
