// bench_options.cpp: parsing `gemm bench` arguments: shapes, lists of dtypes, layouts, ops
// and backends, timing and roofline settings, output files.
#include "bench_options.hpp"

#include "cli_args.hpp"
#include "problem_args.hpp"

namespace gemm_cli {

const char *const bench_help =
    "usage: gemm bench [SHAPE...] [options]\n"
    "\n"
    "Verifies, then times, each backend on each shape, against a baseline and the machine's\n"
    "roofline. SHAPE is N (an N x N x N product) or MxNxK (C is MxN, the inner size is K).\n"
    "Without shapes: 256 512 1024 2048 16x4096x4096 4096x4096x16 127x257x509 1001x999x1003.\n"
    "\n"
    "problem:\n"
    "  --dtype LIST        f32,f64,f16,bf16,c32,c64,e4m3,e5m2 (default f32); f16/bf16 run through\n"
    "                      gemm_ex with C of the same type, computed in f32; c32/c64 are complex;\n"
    "                      e4m3/e5m2 are FP8 with C bf16 (docs/FP8.md);\n"
    "                      T>U: A and B of type T, C of type U ('bf16>f32', quoted for the shell)\n"
    "  --layout LIST       row,col (default row)\n"
    "  --ops LIST          NN,NT,TN,TT: op(A) then op(B) (default NN); C, the conjugate\n"
    "                      transpose, with c32/c64 (CN, NC, CT, ...)\n"
    "  --batch N           strided batch of N products (default 1)\n"
    "  --alpha X --beta Y  scalars (default 1 and 0)\n"
    "  --scale MODE        FP8 dtypes only: none (scales of 1, the default), tensor (one f32\n"
    "                      each for A and B) or block (A one per row and 128 of k, B one per\n"
    "                      128 x 128); values 2^u, u uniform in [-1, 1), applied by the check\n"
    "memory:\n"
    "  --device N          operands in the memory of CUDA device N, calls enqueued on a stream\n"
    "                      of the measurement engine's own and timed with CUDA events\n"
    "  --memory host|pinned|device  host pointers (default), host pointers to page-locked\n"
    "                      memory (cudaHostRegister), or device pointers on --device (0)\n"
    "backends:\n"
    "  --backends LIST     backends to time, by name or name:variant (cublasxt:b4096);\n"
    "                      'auto' is the library's own choice\n"
    "                      (tune cache, else the built-in rule). Default: every available\n"
    "                      backend that serves the memory space, except cpu_ref (the slow\n"
    "                      reference; name it to time it), then auto\n"
    "  --baseline NAME     the ratio column is time(baseline) / time(backend); default cublas\n"
    "                      on the device; on the host cblas when available, else cpu_omp.\n"
    "                      Always timed and shown.\n"
    "timing:\n"
    "  --warmup N          untimed calls before timing (default 2)\n"
    "  --reps N            timed repetitions; median and best are reported (default 10)\n"
    "  --budget-ms X       per shape and backend, warm-up and repetitions stop once X ms\n"
    "                      are spent (at least one repetition; default 1000)\n"
    "  --rounds N          the backends of a shape take turns: N rounds, each with a\n"
    "                      warm-up and a share of the repetitions and budget, each starting\n"
    "                      one backend further on (default 3; 1 times each backend at once)\n"
    "roofline:\n"
    "  --peak-gflops X     compute ceiling in GFLOP/s (for every dtype); measured if not given\n"
    "  --peak-gbs Y        memory bandwidth in GB/s; measured if not given\n"
    "  --measure-peak      measure what is not given (default, host runs only): an FMA loop\n"
    "                      per dtype on all OpenMP threads and a STREAM-style triad\n"
    "  --no-measure-peak   leave the roofline columns empty unless the peaks are given\n"
    "output:\n"
    "  --csv FILE          the table's rows as CSV\n"
    "  --json FILE         the rows and the run's settings as JSON\n"
    "                      (FILE '-': to stdout, in place of the table; one of the two)\n"
    "\n"
    "Every backend's result is checked before it is timed: element by element against a\n"
    "double-precision loop when m*n*k*batch <= 2^27, else by comparing C·t with\n"
    "alpha·A·(B·t) + beta·C0·t for a random vector t; device results are copied back and\n"
    "checked on the host. A WRONG result is flagged and not timed. Inputs are random in\n"
    "[-1, 1] and rotate through copies larger than twice the last-level cache (the device's\n"
    "L2 for --device).\n"
    "\n"
    "With auto and a forced backend timed, the table ends with each problem's fastest forced\n"
    "backend and its median over auto's (1.00 = auto as fast), and the worst of them; --csv\n"
    "and --json carry them as best_forced and best_over_auto.\n"
    "\n"
    "Exit code: 0; 1 when a result is WRONG, a backend named by --backends or --baseline\n"
    "cannot run here (unavailable, or no such variant: nothing is timed) or failed on a\n"
    "problem, a backend of the default set failed for another reason than not serving the\n"
    "problem (cblas does not serve f16: no error), no row was both checked and timed, the\n"
    "GEMM_* configuration is invalid or the device cannot be used; 2 for a bad command line\n"
    "(a backend not in this build too).\n"
    "The reason for a 1 is on stderr.\n";

namespace {

const std::vector<gemm_shape> default_shape_set = {{256, 256, 256},    {512, 512, 512},  {1024, 1024, 1024},
                                                   {2048, 2048, 2048}, {16, 4096, 4096}, {4096, 4096, 16},
                                                   {127, 257, 509},    {1001, 999, 1003}};

std::string keep_name(const std::string &s, const std::string &) { return s; }

// --memory host|pinned|device: device means device 0 unless --device named another.
void memory_parse(const std::string &text, bench_options &o) {
    o.pinned = text == "pinned";
    if (text == "host" || text == "pinned") o.device = -1;
    else if (text == "device") o.device = o.device >= 0 ? o.device : 0;
    else throw usage_error("--memory: '" + text + "' must be host, pinned or device");
}

// Options that take a value; returns false when the name is not one of them.
bool parse_valued_option(const std::string &name, arg_reader &args, bench_options &o) {
    if (name == "--dtype") o.dtypes = list_parse<dtype_pair>(name, args.value(name), dtype_pair_parse);
    else if (name == "--layout") o.layouts = list_parse<gemm_layout_t>(name, args.value(name), layout_parse);
    else if (name == "--ops") o.ops = list_parse<op_pair>(name, args.value(name), ops_parse);
    else if (name == "--batch") o.batch = parse_int(args.value(name), name, 1);
    else if (name == "--alpha") o.alpha = parse_double(args.value(name), name);
    else if (name == "--beta") o.beta = parse_double(args.value(name), name);
    else if (name == "--scale") o.scale = scale_parse(args.value(name));
    else if (name == "--backends") o.backends = list_parse<std::string>(name, args.value(name), keep_name);
    else if (name == "--baseline") o.baseline = args.value(name);
    else if (name == "--warmup") o.warmup = parse_int(args.value(name), name, 0);
    else if (name == "--reps") o.reps = parse_int(args.value(name), name, 1);
    else if (name == "--budget-ms") o.budget_ms = positive_parse(args.value(name), name);
    else if (name == "--rounds") o.rounds = parse_int(args.value(name), name, 1);
    else if (name == "--peak-gflops") o.peak_gflops = positive_parse(args.value(name), name);
    else if (name == "--peak-gbs") o.peak_gbs = positive_parse(args.value(name), name);
    else if (name == "--csv") o.csv_path = args.value(name);
    else if (name == "--json") o.json_path = args.value(name);
    else if (name == "--device") o.device = int(parse_int(args.value(name), name, 0));
    else if (name == "--memory") memory_parse(args.value(name), o);
    else return false;
    return true;
}

}  // namespace

bench_options bench_options_parse(int argc, char **argv, int first) {
    bench_options o;
    arg_reader args(argc, argv, first);
    while (!args.done()) {
        std::string arg = args.take();
        if (parse_valued_option(arg, args, o)) continue;
        args.reject_value(arg);
        if (arg == "--help" || arg == "-h") o.show_help = true;
        else if (arg == "--measure-peak") o.measure_peak = true;
        else if (arg == "--no-measure-peak") o.measure_peak = false;
        else if (!arg.empty() && arg[0] == '-') throw usage_error("unknown option '" + arg + "'");
        else o.shapes.push_back(shape_parse(arg));
    }
    if (o.csv_path == "-" && o.json_path == "-") throw usage_error("--csv - and --json -: only one can go to stdout");
    scale_check(o.scale, o.dtypes);
    o.default_shapes = o.shapes.empty();
    if (o.default_shapes) o.shapes = default_shape_set;
    return o;
}

}  // namespace gemm_cli
