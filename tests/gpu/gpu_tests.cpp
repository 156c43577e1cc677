// gpu_tests.cpp: every available CUDA backend against cpu_ref, with device, managed and host
// (staged) pointers, user streams, threads, and the errors device pointers can cause.
// Without a CUDA device the program prints "SKIPPED: ..." and exits with 77, which CTest
// reports as skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "epilogue_check.hpp"
#include "fp8_grouped_case.hpp"
#include "harness.hpp"

using namespace gemm_test;

namespace {

constexpr int skip_exit_code = 77;

// ---- CUDA helpers --------------------------------------------------------------------------

#define CUDA_REQUIRE(call)                                                                                             \
    do {                                                                                                               \
        cudaError_t e_ = (call);                                                                                       \
        REQUIRE_MESSAGE(e_ == cudaSuccess, #call ": " << cudaGetErrorString(e_));                                      \
    } while (0)

// After every library call, successful or not, no CUDA error may be left behind.
void check_no_cuda_error(const std::string &where) {
    cudaError_t e = cudaGetLastError();
    CHECK_MESSAGE(e == cudaSuccess, where << ": CUDA error left behind: " << cudaGetErrorString(e));
}

// A synchronous cudaMemcpy from pageable host memory may return before its DMA into device
// memory has completed, and work on a non-blocking stream is not ordered after it: every
// upload waits for the device before the test enqueues anything that reads the bytes.
cudaError_t upload(void *dst, const void *src, std::size_t size) {
    const cudaError_t e = cudaMemcpy(dst, src, size, cudaMemcpyDefault);
    return e != cudaSuccess ? e : cudaDeviceSynchronize();
}

enum class memory { device, managed, pinned, host };

const char *memory_name(memory m) {
    switch (m) {
    case memory::device: return "device";
    case memory::managed: return "managed";
    case memory::pinned: return "pinned host";
    case memory::host: return "host";
    }
    return "?";
}

// One buffer in the chosen kind of memory, holding a copy of `init`; with `lead`, the copy
// begins that many bytes into the allocation, after bytes of 0xff (NaN in every type), so that
// a kernel reading from an address rounded down shows it in C.
class buffer {
public:
    buffer(memory kind, const bytes &init, std::size_t lead = 0) : kind_(kind), size_(init.size()), lead_(lead) {
        if (size_ == 0) return;
        bytes whole(lead_, 0xff);
        whole.insert(whole.end(), init.begin(), init.end());
        switch (kind) {
        case memory::device: CUDA_REQUIRE(cudaMalloc(&ptr_, whole.size())); break;
        case memory::managed: CUDA_REQUIRE(cudaMallocManaged(&ptr_, whole.size())); break;
        case memory::pinned: CUDA_REQUIRE(cudaMallocHost(&ptr_, whole.size())); break;
        case memory::host:
            host_ = whole;
            ptr_ = host_.data();
            return;
        }
        CUDA_REQUIRE(upload(ptr_, whole.data(), whole.size()));
    }
    ~buffer() {
        if (!ptr_ || kind_ == memory::host) return;
        if (kind_ == memory::pinned) cudaFreeHost(ptr_);
        else cudaFree(ptr_);
    }
    buffer(const buffer &) = delete;
    buffer &operator=(const buffer &) = delete;

    void *get() const { return ptr_ ? static_cast<char *>(ptr_) + lead_ : nullptr; }
    bytes read() const {
        bytes out(size_);
        if (size_ && kind_ == memory::host) out.assign(host_.begin() + std::ptrdiff_t(lead_), host_.end());
        else if (size_) CUDA_REQUIRE(cudaMemcpy(out.data(), get(), size_, cudaMemcpyDefault));
        return out;
    }

private:
    memory kind_;
    std::size_t size_, lead_;
    void *ptr_ = nullptr;
    bytes host_;
};

// Copies of every matrix of a batch in one kind of memory, and the arrays of their pointers.
struct batch_buffers {
    std::vector<std::unique_ptr<buffer>> a, b, c;
    std::vector<const void *> pa, pb;
    std::vector<void *> pc;

    // lead_ab, lead_c: bytes before each A and B, each C (buffer's lead).
    batch_buffers(memory kind, const std::vector<operands> &ops, std::size_t lead_ab = 0, std::size_t lead_c = 0) {
        for (const operands &o : ops) {
            a.push_back(std::make_unique<buffer>(kind, o.a, lead_ab));
            b.push_back(std::make_unique<buffer>(kind, o.b, lead_ab));
            c.push_back(std::make_unique<buffer>(kind, o.c0, lead_c));
            pa.push_back(a.back()->get()), pb.push_back(b.back()->get()), pc.push_back(c.back()->get());
        }
    }
};

// ---- backends ------------------------------------------------------------------------------

// The CUDA backends of this build that this machine can run (named cu*: cublas, cublaslt,
// cuda_naive, cuda_tiled, and any added later).
// The available CUDA backends; GEMM_TEST_BACKENDS (comma-separated) narrows them, e.g. to run
// one hand-written kernel under compute-sanitizer.
std::vector<std::string> gpu_backends() {
    const char *only = std::getenv("GEMM_TEST_BACKENDS");
    std::string wanted = only ? "," + std::string(only) + "," : "";
    std::vector<std::string> names;
    for (const std::string &n : available_backends())
        if (n.rfind("cu", 0) == 0 && n != "cusparse" &&  // cusparse: sparse products only (gpu_spmm.cpp)
            (wanted.empty() || wanted.find("," + n + ",") != std::string::npos))
            names.push_back(n);
    return names;
}

// cublasxt serves host memory only (device pointers belong to cublas and cublaslt).
bool takes_device_pointers(const std::string &backend) { return backend != "cublasxt"; }

// The backend of a selection ("cublas" of "cublas:streams").
std::string backend_of(const std::string &spec) { return spec.substr(0, spec.find(':')); }

// The GPU backends, and for batches also each way cublas serves one (its variants).
std::vector<std::string> batch_selections() {
    std::vector<std::string> names = gpu_backends();
    if (std::find(names.begin(), names.end(), "cublas") != names.end())
        for (const char *way : {"cublas:one_call", "cublas:streams"}) names.push_back(way);
    return names;
}

bool is_host(memory kind) { return kind == memory::host || kind == memory::pinned; }

// Whether the backend promises this case; otherwise GEMM_STATUS_NOT_SUPPORTED is accepted
// and counted as a skip.
bool must_support(const std::string &backend, const gemm_case &c, memory kind) {
    bool f32_or_f64 = c.ab_type == GEMM_F32 || c.ab_type == GEMM_F64;
    if (backend == "cublas") return true;
    if (backend == "cublaslt") return true;
    const bool half = c.ab_type == GEMM_F16 || c.ab_type == GEMM_BF16;
    if (backend == "cuda_tiled")
        return (f32_or_f64 || half) && (c.ab_type == c.c_type || (half && c.c_type == GEMM_F32));
    if (backend == "cuda_naive") return f32_or_f64 && c.ab_type == c.c_type;
    if (backend == "cublasxt") return f32_or_f64 && c.ab_type == c.c_type && is_host(kind);
    return false;
}

// The process's selection for the guard's scope. A nested guard (cpu_ref for the expected
// result inside a test that forces another backend) gives the enclosing guard's selection
// back, so that the calls after it still run the forced backend.
struct selection_guard {
    explicit selection_guard(const std::string &spec) {
        if (std::string(gemm_get_backend_source()) == "gemm_set_backend") previous = gemm_get_backend();
        gemm_status_t s = gemm_set_backend(spec.c_str());
        REQUIRE_MESSAGE(s == GEMM_STATUS_SUCCESS, "gemm_set_backend(" << spec << "): " << gemm_last_error());
    }
    ~selection_guard() { gemm_set_backend(previous.empty() ? nullptr : previous.c_str()); }
    std::string previous;
};

// The expected C windows: cpu_ref's result on host copies.
std::vector<double> cpu_ref_result(const gemm_case &c, const operands &o) {
    selection_guard sel("cpu_ref");
    run_result r = run_host(c, o);
    REQUIRE_MESSAGE(r.status == GEMM_STATUS_SUCCESS, "cpu_ref failed: " << r.error << " for " << c.describe());
    return window_values(c, r.c);
}

// An FP8 case in the TN form the FP8 kernels read, in `layout`: column-major op(A) = T, op(B) =
// N; row-major N x T, whose canonical form is T x N.
gemm_case fp8_tn_case(gemm_dtype_t ab, gemm_dtype_t ct, gemm_layout_t layout, int64_t m, int64_t n, int64_t k,
                      double alpha, double beta) {
    const bool col = layout == GEMM_COL_MAJOR;
    return make_case(ab, ct, entry::ex, layout, col ? GEMM_OP_T : GEMM_OP_N, col ? GEMM_OP_N : GEMM_OP_T, m, n, k, 0,
                     alpha, beta);
}

run_result run_in(memory kind, const gemm_case &c, const operands &o, cudaStream_t stream) {
    buffer a(kind, o.a), b(kind, o.b), cbuf(kind, o.c0);
    gemm_set_stream(stream);
    run_result r;
    r.status = call_gemm(c, a.get(), b.get(), cbuf.get(), is_host(kind) ? -1 : 0);
    r.error = gemm_last_error();
    gemm_set_stream(nullptr);
    CUDA_REQUIRE(cudaStreamSynchronize(stream));
    r.c = cbuf.read();
    return r;
}

struct tally {
    skip_tally skipped;
    int64_t checked = 0;
};

// Runs c on every GPU backend with device and host pointers, compared with cpu_ref; a third
// of the cases through a plan made for them (its desc on the memory each run uses).
void check_case(const gemm_case &given, tally &t, const std::vector<memory> &kinds = {memory::device, memory::host}) {
    gemm_case c = given;
    if ((c.m + 2 * c.n + c.k + c.batch) % 3 == 0) c.api = entry::plan;
    if (!case_selected(c.describe())) return;
    operands o = make_operands(c);
    std::vector<double> expected = cpu_ref_result(c, o);
    for (const std::string &name : gpu_backends()) {
        // cublasxt loops over batches on the host, one blocking call each: thousands of
        // them test nothing that a few do not.
        if (name == "cublasxt" && c.batch > 100) {
            t.skipped.add(name, c);
            continue;
        }
        selection_guard sel(name);
        for (memory kind : kinds) {
            run_result r = run_in(kind, c, o, nullptr);
            std::string where = name + " " + memory_name(kind) + " " + c.describe();
            check_no_cuda_error(where);
            if (r.status == GEMM_STATUS_NOT_SUPPORTED && !must_support(name, c, kind)) {
                t.skipped.add(name, c);
                continue;
            }
            REQUIRE_MESSAGE(r.status == GEMM_STATUS_SUCCESS, where << ": status " << int(r.status) << ": " << r.error);
            comparison cmp = compare_result(c, o, r.c, expected);
            CHECK_MESSAGE(cmp.ok, where << ": " << cmp.first << "\n  rerun: GEMM_TEST_FILTER='" << c.describe() << "'");
            ++t.checked;
        }
    }
}

void report(const tally &t) {
    MESSAGE(t.checked << " backend runs checked; " << t.skipped.summary());
    CHECK(t.checked > 0);
}

struct type_pair {
    gemm_dtype_t ab, c;
};
constexpr type_pair all_types[] = {{GEMM_F32, GEMM_F32}, {GEMM_F64, GEMM_F64},   {GEMM_F16, GEMM_F16},
                                   {GEMM_F16, GEMM_F32}, {GEMM_BF16, GEMM_BF16}, {GEMM_BF16, GEMM_F32},
                                   {GEMM_C32, GEMM_C32}, {GEMM_C64, GEMM_C64}};

struct scalars {
    double alpha, beta;
};
constexpr scalars scalar_cycle[] = {{1.0, 0.0}, {0.5, -1.5}, {-1.0, 1.0}, {0.0, 2.0}, {1.25, 0.0}};

// The imaginary parts this suite gives complex cases' scalars.
constexpr double alpha_imag = 0.5, beta_imag = -0.25;

gemm_case base_case(type_pair t, gemm_layout_t layout, gemm_op_t ta, gemm_op_t tb, int64_t m, int64_t n, int64_t k) {
    gemm_case c;
    c.ab_type = t.ab;
    c.c_type = t.c;
    bool typed = t.ab == GEMM_F32 || t.ab == GEMM_F64 || is_complex(t.ab);
    c.api = typed && t.ab == t.c && (m + n + k) % 2 == 0 ? entry::typed : entry::ex;
    c.layout = layout;
    c.transa = ta;
    c.transb = tb;
    c.m = m;
    c.n = n;
    c.k = k;
    return c;
}

}  // namespace

TEST_CASE("gpu: CUDA backends are available") {
    std::vector<std::string> names = gpu_backends();
    for (const backend_entry &b : all_backends())
        if (b.name.rfind("cu", 0) == 0) MESSAGE(b.name << ": " << (b.available ? "available" : b.reason));
    CHECK(std::find(names.begin(), names.end(), "cublas") != names.end());
    CHECK(std::find(names.begin(), names.end(), "cublaslt") != names.end());
    CHECK(std::find(names.begin(), names.end(), "cuda_naive") != names.end());
}

TEST_CASE("gpu: correctness matrix, device and host pointers") {
    struct size3 {
        int64_t m, n, k;
    };
    const size3 sizes[] = {{0, 5, 3},    {5, 0, 3},    {4, 5, 0},     {1, 1, 1},       {2, 3, 2},     {17, 31, 33},
                           {33, 17, 31}, {64, 65, 63}, {65, 64, 1},   {127, 128, 129}, {129, 127, 2}, {255, 257, 17},
                           {31, 1, 257}, {1, 129, 7},  {97, 13, 101}, {128, 128, 128}};
    const gemm_layout_t layouts[] = {GEMM_COL_MAJOR, GEMM_ROW_MAJOR};
    const int64_t pads[] = {0, 1, 7};
    for (type_pair t : all_types) {
        tally tl;
        int64_t counter = 0;
        // Complex types take the conjugate transpose in place of the plain one.
        const gemm_op_t other = is_complex(t.ab) ? GEMM_OP_C : GEMM_OP_T;
        for (size3 s : sizes)
            for (gemm_layout_t l : layouts)
                for (gemm_op_t ta : {GEMM_OP_N, other})
                    for (gemm_op_t tb : {GEMM_OP_N, counter % 2 ? GEMM_OP_T : other}) {
                        gemm_case c = base_case(t, l, ta, tb, s.m, s.n, s.k);
                        set_leading_dims(c, pads[counter % 3]);
                        scalars sc = scalar_cycle[counter % 5];
                        set_scalars(c, sc.alpha, sc.beta, alpha_imag, beta_imag);
                        ++counter;
                        check_case(c, tl);
                    }
        report(tl);
    }
}

TEST_CASE("gpu: every alpha/beta combination, C op, managed and pinned memory") {
    tally tl;
    for (type_pair t : all_types)
        for (scalars sc : scalar_cycle)
            for (gemm_op_t ta : {GEMM_OP_N, GEMM_OP_C}) {
                gemm_case c = base_case(t, GEMM_ROW_MAJOR, ta, GEMM_OP_T, 37, 29, 41);
                set_leading_dims(c, 3);
                set_scalars(c, sc.alpha, sc.beta, alpha_imag, beta_imag);
                check_case(c, tl, {memory::device, memory::managed, memory::pinned, memory::host});
            }
    report(tl);
}

// Page-locked host operands are copied by DMA straight from and to the caller's matrices (one
// 2-D copy per matrix): padding and gaps between them must stay untouched there too.
TEST_CASE("gpu: strided batches, shared A or B (stride 0), gaps; device, pageable and page-locked memory") {
    tally tl;
    for (type_pair t : all_types)
        for (int share = 0; share < 4; ++share)
            for (gemm_layout_t l : {GEMM_COL_MAJOR, GEMM_ROW_MAJOR}) {
                gemm_case c = base_case(t, l, share % 2 ? GEMM_OP_T : GEMM_OP_N, share / 2 ? GEMM_OP_N : GEMM_OP_T,
                                        17 + share, 33 - share, 31);
                set_leading_dims(c, share);
                set_batch(c, 3 + share, share & 1, share & 2, share == 3 ? 0 : 5);
                c.api = entry::ex;
                set_scalars(c, 0.75, share == 2 ? 0.0 : -0.5, alpha_imag, beta_imag);
                check_case(c, tl, {memory::device, memory::host, memory::pinned});
            }
    report(tl);
}

TEST_CASE("gpu: launch limits: batch > 65535, n > 65535 * 16, one-element batches") {
    tally tl;
    type_pair f32{GEMM_F32, GEMM_F32};
    gemm_case many = base_case(f32, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_T, 2, 3, 2);
    set_leading_dims(many, 0);
    set_batch(many, 70000, false, true, 1);
    many.beta = 1.0;
    check_case(many, tl);
    gemm_case wide = base_case(f32, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 1, 1100000, 3);
    set_leading_dims(wide, 0);
    check_case(wide, tl);
    gemm_case tiny = base_case({GEMM_F64, GEMM_F64}, GEMM_ROW_MAJOR, GEMM_OP_T, GEMM_OP_N, 1, 1, 1);
    set_leading_dims(tiny, 2);
    set_batch(tiny, 9, true, false, 2);
    tiny.beta = 3.0;
    check_case(tiny, tl);
    report(tl);
}

namespace {
void CUDART_CB hold_stream(void *) { std::this_thread::sleep_for(std::chrono::milliseconds(300)); }
}  // namespace

TEST_CASE("gpu: gemm_set_stream: calls are enqueued on the caller's stream") {
    gemm_case c = base_case({GEMM_F32, GEMM_F32}, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 256, 192, 160);
    set_leading_dims(c, 1);
    operands o = make_operands(c);
    std::vector<double> expected = cpu_ref_result(c, o);
    cudaStream_t stream = nullptr;
    CUDA_REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    for (const std::string &name : gpu_backends()) {
        if (!takes_device_pointers(name)) continue;  // host memory only: a blocking call
        selection_guard sel(name);
        run_in(memory::device, c, o, stream);  // warm-up: handles and workspaces exist now
        buffer a(memory::device, o.a), b(memory::device, o.b), cbuf(memory::device, o.c0);
        // The stream is held by a host function: work enqueued behind it cannot have run
        // when the call returns, and C must still hold its initial bytes.
        CUDA_REQUIRE(cudaLaunchHostFunc(stream, hold_stream, nullptr));
        gemm_set_stream(stream);
        CHECK(gemm_get_stream() == stream);
        gemm_status_t s = call_gemm(c, a.get(), b.get(), cbuf.get());
        gemm_set_stream(nullptr);
        REQUIRE_MESSAGE(s == GEMM_STATUS_SUCCESS, name << ": " << gemm_last_error());
        bytes early(o.c0.size());
        CUDA_REQUIRE(cudaMemcpy(early.data(), cbuf.get(), early.size(), cudaMemcpyDeviceToHost));
        CHECK_MESSAGE(early == o.c0, name << ": C changed before the caller's stream was released");
        CUDA_REQUIRE(cudaStreamSynchronize(stream));
        comparison cmp = compare_result(c, o, cbuf.read(), expected);
        CHECK_MESSAGE(cmp.ok, name << " on a user stream: " << cmp.first);
        check_no_cuda_error(name);
    }
    CUDA_REQUIRE(cudaStreamDestroy(stream));
}

TEST_CASE("gpu: 8 threads at once, each with its own stream, on device, pageable and page-locked memory") {
    constexpr int threads = 8;
    constexpr int rounds = 6;
    std::vector<gemm_case> cases;
    std::vector<operands> ops;
    std::vector<std::vector<double>> expected;
    for (int i = 0; i < threads; ++i) {
        type_pair t = i % 3 == 0 ? type_pair{GEMM_F64, GEMM_F64} : type_pair{GEMM_F32, GEMM_F32};
        gemm_case c = base_case(t, i % 2 ? GEMM_ROW_MAJOR : GEMM_COL_MAJOR, i % 4 < 2 ? GEMM_OP_N : GEMM_OP_T,
                                GEMM_OP_N, 40 + 7 * i, 50 + 5 * i, 30 + 3 * i);
        set_leading_dims(c, i % 3);
        c.beta = i % 2 ? 0.5 : 0.0;
        cases.push_back(c);
        ops.push_back(make_operands(c));
        expected.push_back(cpu_ref_result(c, ops.back()));
    }
    for (const std::string &name : gpu_backends()) {
        selection_guard sel(name);
        std::vector<std::string> failures(threads);
        std::vector<std::thread> pool;
        for (int i = 0; i < threads; ++i)
            pool.emplace_back([&, i] {
                cudaStream_t stream = nullptr;
                if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
                    failures[std::size_t(i)] = "cudaStreamCreate failed";
                    return;
                }
                const gemm_case &c = cases[std::size_t(i)];
                const operands &o = ops[std::size_t(i)];
                // Page-locked copies of the operands, for every third staged round.
                void *pa = nullptr, *pb = nullptr, *pc = nullptr;
                if (cudaMallocHost(&pa, o.a.size()) != cudaSuccess || cudaMallocHost(&pb, o.b.size()) != cudaSuccess ||
                    cudaMallocHost(&pc, o.c0.size()) != cudaSuccess) {
                    failures[std::size_t(i)] = "cudaMallocHost failed";
                    cudaStreamDestroy(stream);
                    return;
                }
                std::memcpy(pa, o.a.data(), o.a.size());
                std::memcpy(pb, o.b.data(), o.b.size());
                for (int r = 0; r < rounds && failures[std::size_t(i)].empty(); ++r) {
                    // alternate device and host (staged) pointers, pageable and page-locked
                    bool staged = r % 2 == 1 || !takes_device_pointers(name);
                    bool pinned = staged && r % 3 == 2;
                    bytes got = o.c0;
                    if (pinned) std::memcpy(pc, o.c0.data(), o.c0.size());
                    void *da = nullptr, *db = nullptr, *dc = nullptr;
                    if (!staged) {
                        cudaMalloc(&da, o.a.size());
                        cudaMalloc(&db, o.b.size());
                        cudaMalloc(&dc, o.c0.size());
                        upload(da, o.a.data(), o.a.size());
                        upload(db, o.b.data(), o.b.size());
                        upload(dc, o.c0.data(), o.c0.size());
                    }
                    gemm_set_stream(stream);
                    gemm_status_t s = pinned   ? call_gemm(c, pa, pb, pc)
                                      : staged ? call_gemm(c, o.a.data(), o.b.data(), got.data())
                                               : call_gemm(c, da, db, dc, 0);
                    std::string error = gemm_last_error();
                    if (pinned) std::memcpy(got.data(), pc, got.size());
                    if (!staged) {
                        cudaStreamSynchronize(stream);
                        cudaMemcpy(got.data(), dc, got.size(), cudaMemcpyDeviceToHost);
                        cudaFree(da);
                        cudaFree(db);
                        cudaFree(dc);
                    }
                    cudaError_t e = cudaGetLastError();
                    if (s != GEMM_STATUS_SUCCESS)
                        failures[std::size_t(i)] = "status " + std::to_string(int(s)) + ": " + error;
                    else if (e != cudaSuccess) failures[std::size_t(i)] = cudaGetErrorString(e);
                    else {
                        comparison cmp = compare_result(c, o, got, expected[std::size_t(i)]);
                        if (!cmp.ok)
                            failures[std::size_t(i)] = (pinned   ? "page-locked: "
                                                        : staged ? "host: "
                                                                 : "device: ") +
                                                       cmp.first;
                    }
                }
                cudaFreeHost(pa);
                cudaFreeHost(pb);
                cudaFreeHost(pc);
                cudaStreamDestroy(stream);
            });
        for (std::thread &t : pool) t.join();
        for (int i = 0; i < threads; ++i)
            CHECK_MESSAGE(failures[std::size_t(i)].empty(), name << " thread " << i << " ("
                                                                 << cases[std::size_t(i)].describe()
                                                                 << "): " << failures[std::size_t(i)]);
    }
}

namespace {

// This process's resident set, in bytes (/proc/self/statm's second field, in pages).
double resident_bytes() {
    std::ifstream statm("/proc/self/statm");
    double total = 0, resident = 0;
    statm >> total >> resident;
    return resident * double(sysconf(_SC_PAGESIZE));
}

double device_free_bytes() {
    std::size_t free = 0, total = 0;
    CUDA_REQUIRE(cudaMemGetInfo(&free, &total));
    return double(free);
}

}  // namespace

// What a backend holds (the thread's buffers, handles, streams, page-locked staging) it holds
// from its first calls on: 10^4 more calls, on pageable and page-locked host memory and (for
// the backends that take it) device memory, leave device memory and the resident set where the
// first 100 left them, within slack for the allocators' own bookkeeping.
TEST_CASE("gpu: 10^4 calls per GPU backend hold no more memory than the first 100") {
    gemm_case c = base_case({GEMM_F32, GEMM_F32}, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_T, 64, 48, 40);
    set_leading_dims(c, 0);
    c.beta = 0.5;
    const operands o = make_operands(c);
    const std::vector<double> expected = cpu_ref_result(c, o);
    void *pinned[3] = {nullptr, nullptr, nullptr};
    void *device[3] = {nullptr, nullptr, nullptr};
    const bytes *init[3] = {&o.a, &o.b, &o.c0};
    for (int i = 0; i < 3; ++i) {
        CUDA_REQUIRE(cudaMallocHost(&pinned[i], init[i]->size()));
        CUDA_REQUIRE(cudaMalloc(&device[i], init[i]->size()));
        CUDA_REQUIRE(upload(device[i], init[i]->data(), init[i]->size()));
        std::memcpy(pinned[i], init[i]->data(), init[i]->size());
    }
    bytes pageable_c = o.c0;
    for (const std::string &name : gpu_backends()) {
        selection_guard sel(name);
        const bool on_device = takes_device_pointers(name);
        // One call of round r: pageable, page-locked, then device memory in turn (C keeps
        // accumulating beta * C: the values are not checked here, the statuses are).
        auto call = [&](int r) {
            switch (r % (on_device ? 3 : 2)) {
            case 0: return call_gemm(c, o.a.data(), o.b.data(), pageable_c.data());
            case 1: return call_gemm(c, pinned[0], pinned[1], pinned[2]);
            default: return call_gemm(c, device[0], device[1], device[2], 0);
            }
        };
        int failed = 0;
        for (int r = 0; r < 100; ++r) failed += call(r) != GEMM_STATUS_SUCCESS;
        CUDA_REQUIRE(cudaDeviceSynchronize());
        const double device_before = device_free_bytes(), resident_before = resident_bytes();
        for (int r = 0; r < 10000; ++r) failed += call(r) != GEMM_STATUS_SUCCESS;
        CUDA_REQUIRE(cudaDeviceSynchronize());
        const double device_after = device_free_bytes(), resident_after = resident_bytes();
        INFO(name << ": device memory free " << device_before / 1e6 << " -> " << device_after / 1e6 << " MB, resident "
                  << resident_before / 1e6 << " -> " << resident_after / 1e6 << " MB");
        CHECK(failed == 0);
        CHECK(device_before - device_after <= 4.0 * (1 << 20));
        CHECK(resident_after - resident_before <= 16.0 * (1 << 20));
        // Still right after all that.
        bytes got = o.c0;
        REQUIRE_MESSAGE(call_gemm(c, o.a.data(), o.b.data(), got.data()) == GEMM_STATUS_SUCCESS, gemm_last_error());
        comparison cmp = compare_result(c, o, got, expected);
        CHECK_MESSAGE(cmp.ok, name << ": " << cmp.first);
    }
    for (int i = 0; i < 3; ++i) {
        CUDA_REQUIRE(cudaFreeHost(pinned[i]));
        CUDA_REQUIRE(cudaFree(device[i]));
    }
}

// gemm_measure's device paths: operands in device memory (timed with CUDA events on the
// library's stream) and page-locked host memory (staged by the backend, timed with the host
// clock). Every backend that ran must have been checked correct against the double-precision
// reference and timed; a CPU backend on device memory must be refused with its reason.
TEST_CASE("gpu: gemm_measure on device memory and on page-locked host memory") {
    const char *names[] = {"cublas", "cuda_naive", "auto", "cpu_omp"};
    for (gemm_dtype_t type : {GEMM_F32, GEMM_F64}) {
        for (int device : {0, -1}) {
            gemm_desc_t d;
            gemm_desc_init(&d, type, GEMM_COL_MAJOR, GEMM_OP_T, GEMM_OP_N, 67, 45, 131);
            d.device = device;
            d.batch_count = 3;
            d.stride_a = d.stride_b = d.stride_c = GEMM_DESC_TIGHT;
            gemm_measure_options_t o;
            gemm_measure_options_init(&o);
            o.budget_ms = 30;
            o.pinned = device < 0;
            o.alpha = 0.75;
            o.beta = device < 0 ? 0.5 : 0.0;
            gemm_measurement_t r[4];
            INFO((type == GEMM_F32 ? "f32" : "f64") << (device < 0 ? ", page-locked host" : ", device"));
            REQUIRE_MESSAGE(gemm_measure(&d, names, 4, &o, r) == GEMM_STATUS_SUCCESS, gemm_last_error());
            for (int i = 0; i < 4; ++i) {
                INFO(std::string(names[i]) << ": " << std::string(r[i].error) << " " << std::string(r[i].note));
                CHECK(std::string(r[i].backend) == names[i]);
                const bool cpu_on_device = i == 3 && device >= 0;
                if (cpu_on_device) {
                    CHECK(r[i].status == GEMM_STATUS_NOT_SUPPORTED);
                    CHECK(r[i].timed == 0);
                    continue;
                }
                CHECK(r[i].status == GEMM_STATUS_SUCCESS);
                CHECK(r[i].checked == 1);
                CHECK(r[i].correct == 1);
                CHECK(r[i].check_ratio <= 1.0);
                CHECK(r[i].timed == 1);
                CHECK(r[i].samples >= 1);
                CHECK(r[i].median_us > 0.0);
                CHECK(r[i].best_us <= r[i].median_us);
            }
        }
    }
}

TEST_CASE("gpu: gemm_measure of a desc with an epilogue on device memory: fused and pass both checked") {
    const char *names[] = {"cublaslt", "cublas", "auto"};
    for (auto [act, aux, m] : {std::tuple{GEMM_ACTIVATION_GELU, 1, 256}, std::tuple{GEMM_ACTIVATION_RELU, 0, 1024},
                               std::tuple{GEMM_ACTIVATION_GELU_BACKWARD, 0, 1024}}) {
        gemm_desc_t d;
        gemm_desc_init(&d, GEMM_BF16, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_T, m, 512, 384);
        d.device = 0;
        d.activation = act;
        d.bias_axis = GEMM_BIAS_COLUMNS;
        d.aux = aux;
        gemm_measure_options_t o;
        gemm_measure_options_init(&o);
        o.budget_ms = 20;
        gemm_measurement_t r[3];
        REQUIRE_MESSAGE(gemm_measure(&d, names, 3, &o, r) == GEMM_STATUS_SUCCESS, gemm_last_error());
        for (const gemm_measurement_t &x : r) {
            INFO(std::string(x.backend) << " activation " << int(act) << ": " << std::string(x.error) << " "
                                        << std::string(x.note));
            CHECK(x.status == GEMM_STATUS_SUCCESS);
            CHECK(x.correct == 1);
            CHECK(std::string(x.check_method) == (m == 256 ? "reference" : "sampled"));
            CHECK(x.timed == 1);
        }
    }
}

TEST_CASE("gpu: device pointers forced onto a CPU backend are refused") {
    gemm_case c = base_case({GEMM_F32, GEMM_F32}, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 8, 9, 10);
    set_leading_dims(c, 0);
    c.beta = 1.0;
    operands o = make_operands(c);
    for (const char *cpu : {"cpu_ref", "cpu_omp", "cblas"}) {
        if (gemm_set_backend(cpu) != GEMM_STATUS_SUCCESS) {
            MESSAGE(cpu << " not usable here, not tested: " << gemm_last_error());
            continue;
        }
        buffer a(memory::device, o.a), b(memory::device, o.b), cbuf(memory::device, o.c0);
        gemm_status_t s = call_gemm(c, a.get(), b.get(), cbuf.get());
        CHECK_MESSAGE(s == GEMM_STATUS_NOT_SUPPORTED, cpu << ": status " << int(s));
        CHECK_MESSAGE(std::string(gemm_last_error()).find("needs host pointers") != std::string::npos,
                      cpu << ": " << gemm_last_error());
        CHECK(cbuf.read() == o.c0);
        check_no_cuda_error(cpu);
        gemm_set_backend(nullptr);
    }
}

TEST_CASE("gpu: mixed host and device pointers are rejected, C unchanged") {
    gemm_case c = base_case({GEMM_F32, GEMM_F32}, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 8, 9, 10);
    set_leading_dims(c, 0);
    c.beta = 1.0;
    operands o = make_operands(c);
    for (const std::string &spec : {std::string("auto"), std::string("cublas"), std::string("cuda_naive")}) {
        selection_guard sel(spec);
        {  // A on the host, B and C on the device
            buffer b(memory::device, o.b), cbuf(memory::device, o.c0);
            gemm_status_t s = call_gemm(c, o.a.data(), b.get(), cbuf.get());
            CHECK_MESSAGE(s == GEMM_STATUS_MIXED_MEMORY_SPACES,
                          spec << ": status " << int(s) << ": " << gemm_last_error());
            CHECK(cbuf.read() == o.c0);
            check_no_cuda_error(spec + ", host A");
        }
        {  // A and B on the device, C on the host
            buffer a(memory::device, o.a), b(memory::device, o.b);
            bytes host_c = o.c0;
            gemm_status_t s = call_gemm(c, a.get(), b.get(), host_c.data());
            CHECK_MESSAGE(s == GEMM_STATUS_MIXED_MEMORY_SPACES,
                          spec << ": status " << int(s) << ": " << gemm_last_error());
            CHECK(host_c == o.c0);
            check_no_cuda_error(spec + ", host C");
        }
    }
}

// Only the memory a call touches decides where it runs (memory.cpp's classify_memory): A and B
// of a call that only scales C (k = 0, alpha = 0) may be host memory, or one past the end of a
// device allocation (an empty slice), beside C on the device, and nothing at all is classified
// where C is empty. Each such call succeeds with C = beta C on the device, by a plain call and
// by a plan run, on every GPU backend that serves device memory.
TEST_CASE("gpu: operands a call does not read do not decide its memory space") {
    const bytes host_operand(64, 0xff);
    bytes end_bytes(64, 0xff);
    const buffer end_of(memory::device, end_bytes);
    const void *past_end = static_cast<const char *>(end_of.get()) + end_bytes.size();
    int checked = 0;
    for (const auto &[k, alpha] : {std::pair{int64_t(0), 1.0}, std::pair{int64_t(10), 0.0}}) {
        gemm_case c = base_case({GEMM_F32, GEMM_F32}, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 8, 9, k);
        set_leading_dims(c, 0);
        c.alpha = alpha;
        c.beta = 0.5;
        const operands o = make_operands(c);
        const std::vector<double> expected = cpu_ref_result(c, o);
        for (const std::string &spec : gpu_backends()) {
            if (spec == "cublasxt") continue;  // host memory only
            selection_guard sel(spec);
            for (entry api : {entry::typed, entry::plan})
                for (const void *ab : {static_cast<const void *>(host_operand.data()), past_end}) {
                    c.api = api;
                    const std::string where =
                        spec + (api == entry::plan ? " plan" : "") + " k=" + std::to_string(k) +
                        " alpha=" + std::to_string(alpha) +
                        (ab == past_end ? ", A and B past a device allocation" : ", A and B on the host");
                    buffer cbuf(memory::device, o.c0);
                    gemm_status_t s = call_gemm(c, ab, ab, cbuf.get(), 0);
                    CUDA_REQUIRE(cudaDeviceSynchronize());
                    check_no_cuda_error(where);
                    REQUIRE_MESSAGE(s == GEMM_STATUS_SUCCESS,
                                    where << ": status " << int(s) << ": " << gemm_last_error());
                    const comparison cmp = compare_result(c, o, cbuf.read(), expected);
                    CHECK_MESSAGE(cmp.ok, where << ": " << cmp.first);
                    ++checked;
                }
        }
    }
    // C empty (m = 0): A on the device, B and C on the host; nothing to do, nothing refused.
    gemm_case empty = base_case({GEMM_F32, GEMM_F32}, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 0, 9, 10);
    set_leading_dims(empty, 0);
    const bytes b_bytes(9 * 10 * sizeof(float), 0);
    const buffer a_dev(memory::device, bytes(10 * sizeof(float), 0));
    bytes host_c(4, 0x7f);
    for (const std::string &spec : gpu_backends()) {
        selection_guard sel(spec);
        const gemm_status_t s = call_gemm(empty, a_dev.get(), b_bytes.data(), host_c.data());
        CHECK_MESSAGE(s == GEMM_STATUS_SUCCESS, spec << " m = 0: status " << int(s) << ": " << gemm_last_error());
        CHECK(host_c == bytes(4, 0x7f));
    }
    MESSAGE(checked << " calls that only scale C on the device checked");
    CHECK(checked > 0);
}

// A call classifies the operands that lie in an allocation it has already met by that
// allocation (as a caching allocator carves them from one): on device and on page-locked host
// memory the call computes, and with C in the other space it is still refused, C unchanged;
// by a plain call and by a run of a plan that checks its pointers (one that trusts its desc
// would hand the kernel a host C).
TEST_CASE("gpu: operands carved from one allocation") {
    gemm_case c = base_case({GEMM_F32, GEMM_F32}, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 8, 9, 10);
    set_leading_dims(c, 0);
    c.beta = 1.0;
    c.check_pointers = true;
    const operands o = make_operands(c);
    const std::vector<double> expected = cpu_ref_result(c, o);
    auto rounded = [](std::size_t n) { return (n + 255) / 256 * 256; };
    const std::size_t at_b = rounded(o.a.size()), at_c = at_b + rounded(o.b.size());
    bytes init(at_c + o.c0.size());
    std::copy(o.a.begin(), o.a.end(), init.begin());
    std::copy(o.b.begin(), o.b.end(), init.begin() + std::ptrdiff_t(at_b));
    std::copy(o.c0.begin(), o.c0.end(), init.begin() + std::ptrdiff_t(at_c));
    int checked = 0;
    for (memory kind : {memory::device, memory::pinned}) {
        buffer whole(kind, init);
        char *base = static_cast<char *>(whole.get());
        // The other space for C: pageable host memory beside device A and B, device memory
        // beside page-locked A and B.
        buffer elsewhere(kind == memory::device ? memory::host : memory::device, o.c0);
        const int device = kind == memory::device ? 0 : -1;
        for (entry api : {entry::typed, entry::plan})
            for (const std::string &spec : {std::string("auto"), std::string("cublas"), std::string("cuda_naive")}) {
                selection_guard sel(spec);
                c.api = api;
                const std::string where = spec + " " + memory_name(kind) + (api == entry::plan ? " plan" : "");
                CUDA_REQUIRE(upload(base + at_c, o.c0.data(), o.c0.size()));
                gemm_status_t s = call_gemm(c, base, base + at_b, base + at_c, device);
                CUDA_REQUIRE(cudaDeviceSynchronize());
                check_no_cuda_error(where);
                REQUIRE_MESSAGE(s == GEMM_STATUS_SUCCESS, where << ": status " << int(s) << ": " << gemm_last_error());
                bytes got(o.c0.size());
                CUDA_REQUIRE(cudaMemcpy(got.data(), base + at_c, got.size(), cudaMemcpyDefault));
                comparison cmp = compare_result(c, o, got, expected);
                CHECK_MESSAGE(cmp.ok, where << ": " << cmp.first);
                ++checked;
                s = call_gemm(c, base, base + at_b, elsewhere.get(), device);
                CHECK_MESSAGE(s == GEMM_STATUS_MIXED_MEMORY_SPACES,
                              where << ", C elsewhere: status " << int(s) << ": " << gemm_last_error());
                CHECK(elsewhere.read() == o.c0);
                check_no_cuda_error(where + ", C elsewhere");
            }
    }
    MESSAGE(checked << " calls on operands of one allocation checked");
    CHECK(checked == 12);
}

// A device call runs on the device its operands are on and gives the calling thread back the
// current device it had: a thread that has made no CUDA call yet (no context current, so the
// library asks the runtime), and with two devices a thread whose current device is another.
TEST_CASE("gpu: a device call runs on its operands' device and leaves the thread's current device as it was") {
    gemm_case c = base_case({GEMM_F32, GEMM_F32}, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 33, 17, 65);
    set_leading_dims(c, 0);
    const operands o = make_operands(c);
    const std::vector<double> expected = cpu_ref_result(c, o);
    int devices = 0;
    CUDA_REQUIRE(cudaGetDeviceCount(&devices));
    // On device 0's memory, from a thread whose current device is `current` (-1: a new thread
    // that has not called CUDA).
    auto check_on = [&](int current, const std::string &spec) {
        selection_guard sel(spec);
        CUDA_REQUIRE(cudaSetDevice(0));
        buffer a(memory::device, o.a), b(memory::device, o.b), cbuf(memory::device, o.c0);
        gemm_status_t s = GEMM_STATUS_INTERNAL_ERROR;
        std::string error;  // the calling thread's gemm_last_error()
        int after = -1;
        std::string where =
            spec + (current < 0 ? " from a new thread" : " from current device " + std::to_string(current));
        if (current < 0) {
            std::thread([&] {
                s = call_gemm(c, a.get(), b.get(), cbuf.get(), 0);
                error = gemm_last_error();
                cudaGetDevice(&after);
                cudaDeviceSynchronize();
            }).join();
        } else {
            CUDA_REQUIRE(cudaSetDevice(current));
            s = call_gemm(c, a.get(), b.get(), cbuf.get(), 0);
            error = gemm_last_error();
            CUDA_REQUIRE(cudaGetDevice(&after));
            CUDA_REQUIRE(cudaSetDevice(0));
            CUDA_REQUIRE(cudaDeviceSynchronize());
        }
        REQUIRE_MESSAGE(s == GEMM_STATUS_SUCCESS, where << ": " << error);
        CHECK_MESSAGE(after == (current < 0 ? 0 : current), where << ": current device " << after << " after the call");
        comparison cmp = compare_result(c, o, cbuf.read(), expected);
        CHECK_MESSAGE(cmp.ok, where << ": " << cmp.first);
        check_no_cuda_error(where);
    };
    for (const std::string &spec : gpu_backends()) {
        if (!takes_device_pointers(spec)) continue;
        check_on(-1, spec);
        if (devices > 1) check_on(devices - 1, spec);
    }
    if (devices < 2) MESSAGE("one CUDA device: calls from a thread current on another device not run");
}

TEST_CASE("gpu: pointer-array batches on device and host memory, matrices one element past 16 bytes; a host "
          "matrix among device ones is refused") {
    // Five matrices in separate allocations, through gemm_ex_batched with a host array of their
    // pointers, on every GPU backend: each against cpu_ref's result for it. On device memory
    // also with every matrix one element past a 16-byte boundary, after bytes of NaN, so that
    // a kernel that took the pointers as aligned would show it in C (cuBLAS's batched call
    // cannot see them: the cublas backend gives such batches to plain calls). At 33x17x29
    // cuBLAS's batched call was right even so; the last shape, f16 with C in f32 at 64x64x64,
    // column-major T T with unpadded leading dimensions, is one where it was not
    // (cublas.cpp, vectors_aligned).
    struct batch_shape {
        type_pair t;
        gemm_layout_t layout;
        gemm_op_t ta, tb;
        int64_t m, n, k, pad;
    };
    tally tl;
    for (const batch_shape &shape :
         {batch_shape{{GEMM_F32, GEMM_F32}, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_T, 33, 17, 29, 2},
          batch_shape{{GEMM_C64, GEMM_C64}, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_C, 33, 17, 29, 2},
          batch_shape{{GEMM_BF16, GEMM_F32}, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_T, 33, 17, 29, 2},
          batch_shape{{GEMM_F16, GEMM_F16}, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_T, 33, 17, 29, 2},
          batch_shape{{GEMM_F16, GEMM_F32}, GEMM_COL_MAJOR, GEMM_OP_T, GEMM_OP_T, 64, 64, 64, 0}}) {
        const type_pair t = shape.t;
        gemm_case c = base_case(t, shape.layout, shape.ta, shape.tb, shape.m, shape.n, shape.k);
        set_leading_dims(c, shape.pad);
        set_scalars(c, 1.5, 0.5, alpha_imag, beta_imag);
        constexpr int count = 5;
        std::vector<operands> ops;
        std::vector<std::vector<double>> expected;
        for (int i = 0; i < count; ++i) {
            ops.push_back(make_operands(c, 40 + uint64_t(i)));
            expected.push_back(cpu_ref_result(c, ops.back()));
        }
        const float alpha_f[2] = {float(c.alpha), float(c.alpha_imag)}, beta_f[2] = {float(c.beta), float(c.beta_imag)};
        const double alpha_d[2] = {c.alpha, c.alpha_imag}, beta_d[2] = {c.beta, c.beta_imag};
        const bool doubles = c.compute_type() == GEMM_C64;
        const void *alpha = doubles ? static_cast<const void *>(alpha_d) : alpha_f;
        const void *beta = doubles ? static_cast<const void *>(beta_d) : beta_f;
        for (const std::string &name : batch_selections()) {
            selection_guard sel(name);
            for (const auto &[kind, off] :
                 {std::pair{memory::device, false}, std::pair{memory::device, true}, std::pair{memory::host, false}}) {
                batch_buffers bufs(kind, ops, off ? dtype_size(c.ab_type) : 0, off ? dtype_size(c.c_type) : 0);
                const std::vector<std::unique_ptr<buffer>> &cb = bufs.c;
                std::vector<const void *> &pa = bufs.pa, &pb = bufs.pb;
                std::vector<void *> &pc = bufs.pc;
                gemm_status_t s = gemm_ex_batched(c.layout, c.transa, c.transb, c.m, c.n, c.k, alpha, pa.data(),
                                                  c.ab_type, c.lda, pb.data(), c.ab_type, c.ldb, beta, pc.data(),
                                                  c.c_type, c.ldc, count, c.compute_type());
                CUDA_REQUIRE(cudaDeviceSynchronize());
                std::string where =
                    name + " " + memory_name(kind) + (off ? " one element off" : "") + " batched " + c.describe();
                check_no_cuda_error(where);
                if (s == GEMM_STATUS_NOT_SUPPORTED && !must_support(backend_of(name), c, kind)) {
                    for (int i = 0; i < count; ++i) CHECK(cb[std::size_t(i)]->read() == ops[std::size_t(i)].c0);
                    tl.skipped.add(name, c);
                    continue;
                }
                REQUIRE_MESSAGE(s == GEMM_STATUS_SUCCESS, where << ": " << gemm_last_error());
                for (int i = 0; i < count; ++i) {
                    comparison cmp =
                        compare_result(c, ops[std::size_t(i)], cb[std::size_t(i)]->read(), expected[std::size_t(i)]);
                    CHECK_MESSAGE(cmp.ok, where << " matrix " << i << ": " << cmp.first);
                }
                ++tl.checked;
                if (kind != memory::device || off) continue;
                // Matrix 3's C on the host, the others on the device: refused, nothing computed.
                bytes host_c = ops[3].c0;
                pc[3] = host_c.data();
                for (int i = 0; i < count; ++i)
                    if (i != 3)
                        CUDA_REQUIRE(
                            upload(pc[std::size_t(i)], ops[std::size_t(i)].c0.data(), ops[std::size_t(i)].c0.size()));
                s = gemm_ex_batched(c.layout, c.transa, c.transb, c.m, c.n, c.k, alpha, pa.data(), c.ab_type, c.lda,
                                    pb.data(), c.ab_type, c.ldb, beta, pc.data(), c.c_type, c.ldc, count,
                                    c.compute_type());
                CHECK_MESSAGE(s == GEMM_STATUS_MIXED_MEMORY_SPACES, where << ": " << int(s) << " " << gemm_last_error());
                CHECK(host_c == ops[3].c0);
                for (int i = 0; i < count; ++i)
                    if (i != 3) CHECK(cb[std::size_t(i)]->read() == ops[std::size_t(i)].c0);
                check_no_cuda_error(where + ", mixed");
            }
        }
    }
    report(tl);
}

// The bytes of an array (of pointers, of bf16 bit patterns), as a buffer copies them.
template <class T> bytes bytes_of(const std::vector<T> &values) {
    bytes out(values.size() * sizeof(T));
    std::memcpy(out.data(), values.data(), out.size());
    return out;
}

TEST_CASE("gpu: pointer arrays in device and managed memory are read in the stream's order; one too short, NULL "
          "inside, or a captured stream is refused, C unchanged") {
    // cuBLAS takes a batch's pointer arrays in device memory. Here they are filled by copies
    // queued on the caller's stream behind a 50 ms host function, from page-locked memory, so
    // a library that read them before the stream reached the call would find NULL pointers.
    gemm_case c = base_case({GEMM_F32, GEMM_F32}, GEMM_COL_MAJOR, GEMM_OP_T, GEMM_OP_N, 45, 38, 27);
    set_leading_dims(c, 3);
    set_scalars(c, -0.75, 1.25);
    constexpr int count = 6;
    const int64_t group_m[2] = {c.m, c.m}, group_n[2] = {c.n, c.n}, group_k[2] = {c.k, c.k};
    const int64_t group_lda[2] = {c.lda, c.lda}, group_ldb[2] = {c.ldb, c.ldb}, group_ldc[2] = {c.ldc, c.ldc};
    const int64_t group_size[2] = {2, count - 2};
    const gemm_op_t group_ta[2] = {c.transa, c.transa}, group_tb[2] = {c.transb, c.transb};
    const float alpha = float(c.alpha), beta = float(c.beta);
    const float group_alpha[2] = {alpha, alpha}, group_beta[2] = {beta, beta};
    std::vector<operands> ops;
    std::vector<std::vector<double>> expected;
    for (int i = 0; i < count; ++i) {
        ops.push_back(make_operands(c, 90 + uint64_t(i)));
        expected.push_back(cpu_ref_result(c, ops.back()));
    }
    cudaStream_t stream = nullptr;
    CUDA_REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    // One batch call, batched or grouped, with the given arrays on `stream`; its message in
    // `error` (gemm_set_stream, an API call too, clears it).
    std::string error;
    auto call = [&](bool grouped, const void *a, const void *b, const void *cp) {
        auto pa = static_cast<const void *const *>(a), pb = static_cast<const void *const *>(b);
        auto pc = static_cast<void *const *>(const_cast<void *>(cp));
        gemm_set_stream(stream);
        gemm_status_t s = grouped ? gemm_ex_grouped(c.layout, group_ta, group_tb, group_m, group_n, group_k,
                                                    group_alpha, pa, GEMM_F32, group_lda, pb, GEMM_F32, group_ldb,
                                                    group_beta, pc, GEMM_F32, group_ldc, 2, group_size, GEMM_F32)
                                  : gemm_sgemm_batched(c.layout, c.transa, c.transb, c.m, c.n, c.k, alpha,
                                                       reinterpret_cast<const float *const *>(pa), c.lda,
                                                       reinterpret_cast<const float *const *>(pb), c.ldb, beta,
                                                       reinterpret_cast<float *const *>(pc), c.ldc, count);
        error = gemm_last_error();
        gemm_set_stream(nullptr);
        return s;
    };
    tally tl;
    for (const std::string &name : batch_selections()) {
        if (!takes_device_pointers(name)) continue;
        selection_guard sel(name);
        for (memory kind : {memory::device, memory::managed})
            for (bool grouped : {false, true}) {
                batch_buffers bufs(memory::device, ops);
                const bytes pa = bytes_of(bufs.pa), pb = bytes_of(bufs.pb), pc = bytes_of(bufs.pc);
                const bytes zeros(pa.size(), 0);
                buffer da(kind, zeros), db(kind, zeros), dc(kind, zeros);
                buffer ha(memory::pinned, pa), hb(memory::pinned, pb), hc(memory::pinned, pc);
                CUDA_REQUIRE(cudaLaunchHostFunc(
                    stream, [](void *) { std::this_thread::sleep_for(std::chrono::milliseconds(50)); }, nullptr));
                for (auto [to, from] : {std::pair{&da, &ha}, std::pair{&db, &hb}, std::pair{&dc, &hc}})
                    CUDA_REQUIRE(cudaMemcpyAsync(to->get(), from->get(), pa.size(), cudaMemcpyDefault, stream));
                gemm_status_t s = call(grouped, da.get(), db.get(), dc.get());
                CUDA_REQUIRE(cudaStreamSynchronize(stream));
                std::string where = name + (grouped ? " grouped" : " batched") + ", arrays in " + memory_name(kind);
                check_no_cuda_error(where);
                REQUIRE_MESSAGE(s == GEMM_STATUS_SUCCESS, where << ": " << error);
                for (std::size_t i = 0; i < ops.size(); ++i) {
                    comparison cmp = compare_result(c, ops[i], bufs.c[i]->read(), expected[i]);
                    CHECK_MESSAGE(cmp.ok, where << " matrix " << i << ": " << cmp.first);
                }
                ++tl.checked;
            }
    }
    report(tl);

    batch_buffers bufs(memory::device, ops);
    const bytes pa = bytes_of(bufs.pa), pb = bytes_of(bufs.pb), pc = bytes_of(bufs.pc);
    buffer da(memory::device, pa), db(memory::device, pb), dc(memory::device, pc);
    auto c_unchanged = [&](const std::string &where) {
        for (std::size_t i = 0; i < ops.size(); ++i)
            CHECK_MESSAGE(bufs.c[i]->read() == ops[i].c0, where << " C[" << i << "]");
        check_no_cuda_error(where);
    };
    for (bool grouped : {false, true}) {
        const std::string form = grouped ? "grouped" : "batched";
        // A's array at the end of its allocation, with room for one pointer fewer than the batch.
        const std::size_t room = std::size_t(2) << 20;
        bytes tail(room, 0);
        std::memcpy(tail.data() + room - (count - 1) * sizeof(void *), pa.data(), (count - 1) * sizeof(void *));
        buffer short_a(memory::device, tail);
        gemm_status_t s =
            call(grouped, static_cast<char *>(short_a.get()) + room - (count - 1) * sizeof(void *), db.get(), dc.get());
        CHECK_MESSAGE(s == GEMM_STATUS_INVALID_POINTER, form << " short A array: " << int(s) << " " << error);
        CHECK_MESSAGE(error.find("holds 5 pointers") != std::string::npos, error);
        if (!grouped) MESSAGE("a short device array: " << error);
        c_unchanged(form + " short A array");

        // A NULL among the pointers the device array holds is found as in a host array.
        std::vector<const void *> with_null = bufs.pa;
        with_null[3] = nullptr;
        buffer null_a(memory::device, bytes_of(with_null));
        s = call(grouped, null_a.get(), db.get(), dc.get());
        CHECK_MESSAGE(s == GEMM_STATUS_INVALID_POINTER, form << " NULL A[3]: " << int(s) << " " << error);
        CHECK_MESSAGE(error.find("A[3] is NULL") != std::string::npos, error);
        c_unchanged(form + " NULL A[3]");

        // Under capture the host cannot read the arrays: refused, the capture intact.
        CUDA_REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        s = call(grouped, da.get(), db.get(), dc.get());
        cudaGraph_t graph = nullptr;
        cudaError_t captured = cudaStreamEndCapture(stream, &graph);
        if (graph) cudaGraphDestroy(graph);
        CHECK_MESSAGE(s == GEMM_STATUS_NOT_SUPPORTED, form << " under capture: " << int(s) << " " << error);
        CHECK_MESSAGE(error.find("captured") != std::string::npos, error);
        CHECK_MESSAGE(captured == cudaSuccess, "cudaStreamEndCapture: " << cudaGetErrorString(captured));
        c_unchanged(form + " under capture");
    }
    cudaStreamDestroy(stream);
}

TEST_CASE("gpu: grouped batches on device memory, every GPU backend, against cpu_ref") {
    // Groups of their own shapes, ops and scalars (one library call where the backend has one,
    // cuBLAS's grouped GEMM), a group that only scales C (k = 0) and an empty one.
    struct group_shape {
        int64_t m, n, k, count;
        gemm_op_t ta, tb;
        double alpha, beta;
    };
    const group_shape shapes[] = {{64, 33, 17, 3, GEMM_OP_N, GEMM_OP_T, 1.0, 0.0},
                                  {7, 128, 65, 2, GEMM_OP_T, GEMM_OP_N, -0.5, 1.0},
                                  {31, 1, 200, 1, GEMM_OP_N, GEMM_OP_N, 2.0, 0.5},
                                  {16, 16, 16, 0, GEMM_OP_N, GEMM_OP_N, 1.0, 0.0}};
    tally tl;
    for (type_pair t : {type_pair{GEMM_F32, GEMM_F32}, type_pair{GEMM_F64, GEMM_F64}, type_pair{GEMM_BF16, GEMM_F32},
                        type_pair{GEMM_C32, GEMM_C32}}) {
        for (bool with_k0 : {false, true}) {
            std::vector<gemm_case> cases;
            std::vector<operands> ops;
            std::vector<std::vector<double>> expected;
            std::vector<gemm_op_t> ta, tb;
            std::vector<int64_t> m, n, k, lda, ldb, ldc, size;
            std::vector<double> alpha_d, beta_d;
            std::vector<float> alpha_f, beta_f;
            for (const group_shape &g : shapes) {
                gemm_case c = base_case(t, GEMM_COL_MAJOR, is_complex(t.ab) && g.ta == GEMM_OP_T ? GEMM_OP_C : g.ta,
                                        g.tb, g.m, g.n, with_k0 && g.count == 2 ? 0 : g.k);
                set_leading_dims(c, 1);
                set_scalars(c, g.alpha, g.beta, alpha_imag, beta_imag);
                for (int64_t i = 0; i < g.count; ++i) {
                    cases.push_back(c);
                    ops.push_back(make_operands(c, 77 + ops.size()));
                    expected.push_back(cpu_ref_result(c, ops.back()));
                }
                ta.push_back(c.transa), tb.push_back(c.transb), m.push_back(c.m), n.push_back(c.n), k.push_back(c.k);
                lda.push_back(c.lda), ldb.push_back(c.ldb), ldc.push_back(c.ldc), size.push_back(g.count);
                for (auto [re, im, f, d] : {std::tuple{c.alpha, c.alpha_imag, &alpha_f, &alpha_d},
                                            std::tuple{c.beta, c.beta_imag, &beta_f, &beta_d}}) {
                    f->push_back(float(re)), d->push_back(re);
                    if (is_complex(t.ab)) f->push_back(float(im)), d->push_back(im);
                }
            }
            const gemm_dtype_t compute = cases.front().compute_type();
            const bool doubles = compute == GEMM_F64 || compute == GEMM_C64;
            const void *alpha = doubles ? static_cast<const void *>(alpha_d.data()) : alpha_f.data();
            const void *beta = doubles ? static_cast<const void *>(beta_d.data()) : beta_f.data();
            for (const std::string &name : batch_selections()) {
                if (!takes_device_pointers(name)) continue;
                selection_guard sel(name);
                batch_buffers bufs(memory::device, ops);
                const std::vector<std::unique_ptr<buffer>> &cb = bufs.c;
                const std::vector<const void *> &pa = bufs.pa, &pb = bufs.pb;
                const std::vector<void *> &pc = bufs.pc;
                gemm_status_t s =
                    gemm_ex_grouped(GEMM_COL_MAJOR, ta.data(), tb.data(), m.data(), n.data(), k.data(), alpha,
                                    pa.data(), t.ab, lda.data(), pb.data(), t.ab, ldb.data(), beta, pc.data(), t.c,
                                    ldc.data(), int64_t(size.size()), size.data(), compute);
                CUDA_REQUIRE(cudaDeviceSynchronize());
                std::string where = name + " grouped " + gemm_dtype_name(t.ab) + (with_k0 ? " with k = 0" : "");
                check_no_cuda_error(where);
                if (s == GEMM_STATUS_NOT_SUPPORTED && !must_support(backend_of(name), cases.front(), memory::device)) {
                    for (std::size_t i = 0; i < ops.size(); ++i) CHECK(cb[i]->read() == ops[i].c0);
                    tl.skipped.add(name, cases.front());
                    continue;
                }
                REQUIRE_MESSAGE(s == GEMM_STATUS_SUCCESS, where << ": " << gemm_last_error());
                for (std::size_t i = 0; i < ops.size(); ++i) {
                    comparison cmp = compare_result(cases[i], ops[i], cb[i]->read(), expected[i]);
                    CHECK_MESSAGE(cmp.ok, where << " matrix " << i << " " << cases[i].describe() << ": " << cmp.first);
                }
                ++tl.checked;
            }
        }
    }
    report(tl);
}

TEST_CASE("gpu: a batch spread over side streams is one step of the caller's stream") {
    // 16 matrices on a held user stream, each way cublas serves a batch: C is unchanged when the
    // call returns, and synchronizing that stream alone is enough to read every result.
    gemm_case c = base_case({GEMM_F32, GEMM_F32}, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_T, 384, 320, 448);
    set_leading_dims(c, 1);
    constexpr int count = 16;
    std::vector<operands> ops;
    std::vector<std::vector<double>> expected;
    for (int i = 0; i < count; ++i) {
        ops.push_back(make_operands(c, 500 + uint64_t(i)));
        expected.push_back(cpu_ref_result(c, ops.back()));
    }
    cudaStream_t stream = nullptr;
    CUDA_REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    int ways = 0;
    for (const std::string &name : batch_selections()) {
        if (backend_of(name) != "cublas") continue;
        selection_guard sel(name);
        batch_buffers bufs(memory::device, ops);
        const std::vector<std::unique_ptr<buffer>> &cb = bufs.c;
        const std::vector<const void *> &pa = bufs.pa, &pb = bufs.pb;
        const std::vector<void *> &pc = bufs.pc;
        const float alpha = float(c.alpha), beta = float(c.beta);
        gemm_set_stream(stream);
        auto call = [&] {
            return gemm_ex_batched(c.layout, c.transa, c.transb, c.m, c.n, c.k, &alpha, pa.data(), c.ab_type, c.lda,
                                   pb.data(), c.ab_type, c.ldb, &beta, pc.data(), c.c_type, c.ldc, count,
                                   c.compute_type());
        };
        REQUIRE(call() == GEMM_STATUS_SUCCESS);  // warm-up: streams, handles and workspaces exist now
        CUDA_REQUIRE(cudaStreamSynchronize(stream));
        for (int i = 0; i < count; ++i)
            CUDA_REQUIRE(upload(pc[std::size_t(i)], ops[std::size_t(i)].c0.data(), ops[std::size_t(i)].c0.size()));
        CUDA_REQUIRE(cudaLaunchHostFunc(stream, hold_stream, nullptr));
        gemm_status_t s = call();
        gemm_set_stream(nullptr);
        REQUIRE_MESSAGE(s == GEMM_STATUS_SUCCESS, name << ": " << gemm_last_error());
        for (int i = 0; i < count; ++i)
            CHECK_MESSAGE(cb[std::size_t(i)]->read() == ops[std::size_t(i)].c0,
                          name << ": C[" << i << "] changed before the caller's stream was released");
        CUDA_REQUIRE(cudaStreamSynchronize(stream));
        for (int i = 0; i < count; ++i) {
            comparison cmp =
                compare_result(c, ops[std::size_t(i)], cb[std::size_t(i)]->read(), expected[std::size_t(i)]);
            CHECK_MESSAGE(cmp.ok, name << " matrix " << i << " after synchronizing the caller's stream: " << cmp.first);
        }
        check_no_cuda_error(name);
        ++ways;
    }
    CUDA_REQUIRE(cudaStreamDestroy(stream));
    if (ways == 0) MESSAGE("cublas not available: nothing checked");
}

TEST_CASE("gpu: a pointer batch on device memory is tuned by its key, each way cublas serves one") {
    // form=pointers: both of cublas's ways are candidates, each timed and checked as a
    // gemm_ex_batched call of 24 matrices runs it.
    const bool have = std::find(gpu_backends().begin(), gpu_backends().end(), "cublas") != gpu_backends().end();
    if (!have) {
        MESSAGE("cublas not available: nothing checked");
        return;
    }
    for (const char *key : {"bf16 f32 NN 96 80 112 batch=24 ld=tight align=16 space=device beta=0 form=pointers",
                            "f32 f32 TN 33 47 29 batch=24 ld=tight align=elem space=device beta=any form=pointers"}) {
        gemm_tune_report_t report;
        REQUIRE_MESSAGE(gemm_tune_key(key, 0, 30, "cublas", 0, &report) == GEMM_STATUS_SUCCESS,
                        key << ": " << gemm_last_error());
        INFO(key);
        CHECK(std::string(report.backend) == "cublas");
        std::set<std::string> ways;
        for (int64_t i = 0; i < report.candidate_count; ++i) {
            const gemm_tune_candidate_t &cand = report.candidates[i];
            INFO("candidate " << std::string(cand.backend) << ":" << std::string(cand.variant) << " "
                              << std::string(cand.note));
            CHECK(cand.correct == 1);
            ways.insert(cand.variant);
        }
        CHECK(ways.count("one_call") == 1);
        CHECK(ways.count("streams") == 1);
    }
}

namespace {

// An epilogue case on one memory kind: C, the bias, aux and bias_grad all in it.
epilogue_result run_epilogue_in(memory kind, const epilogue_case &e, const epilogue_operands &o) {
    buffer a(kind, o.gemm.a), b(kind, o.gemm.b), c(kind, o.gemm.c0), bias(kind, o.bias), aux(kind, o.aux0),
        grad(kind, o.bias_grad0);
    epilogue_result r;
    r.status = call_epilogue(e, a.get(), b.get(), c.get(), bias.get(), grad.get(), aux.get());
    r.error = gemm_last_error();
    CUDA_REQUIRE(cudaDeviceSynchronize());
    r.c = c.read();
    r.aux = aux.read();
    r.bias_grad = grad.read();
    return r;
}

// Epilogue cases for the GPU: every activation and bias axis, with and without aux, in the
// types cuBLASLt fuses (and f64, which it may not), at odd sizes and at sizes whose leading
// dimensions suit cuBLASLt (multiples of 8), so both its fused path and the pass run.
std::vector<epilogue_case> gpu_epilogue_cases() {
    std::vector<epilogue_case> cases;
    const type_pair types[] = {
        {GEMM_F32, GEMM_F32}, {GEMM_BF16, GEMM_BF16}, {GEMM_BF16, GEMM_F32}, {GEMM_F16, GEMM_F16}, {GEMM_F64, GEMM_F64}};
    const int64_t sizes[][3] = {{64, 48, 96}, {37, 29, 41}, {128, 72, 0}};
    int turn = 0;
    for (int act = GEMM_ACTIVATION_NONE; act <= GEMM_ACTIVATION_GELU_BACKWARD; ++act)
        for (int axis = GEMM_BIAS_NONE; axis <= GEMM_BIAS_COLUMNS; ++axis)
            for (int aux = 0; aux < 2; ++aux) {
                const auto a = static_cast<gemm_activation_t>(act);
                if ((a == GEMM_ACTIVATION_RELU_BACKWARD || a == GEMM_ACTIVATION_GELU_BACKWARD) && aux) continue;
                if (a == GEMM_ACTIVATION_NONE && axis == GEMM_BIAS_NONE && !aux) continue;
                for (const type_pair &t : types) {
                    ++turn;
                    const int64_t *sz = sizes[turn % 3];
                    const gemm_layout_t layout = turn % 2 ? GEMM_ROW_MAJOR : GEMM_COL_MAJOR;
                    const gemm_op_t ta = turn % 3 == 1 ? GEMM_OP_T : GEMM_OP_N,
                                    tb = turn % 4 == 2 ? GEMM_OP_T : GEMM_OP_N;
                    gemm_case g = make_case(t.ab, t.c, entry::ex, layout, ta, tb, sz[0], sz[1], sz[2],
                                            turn % 5 == 0 ? 8 : 0, turn % 7 == 3 ? 0.0 : 1.0, turn % 2 ? 0.5 : 0.0);
                    cases.push_back(
                        make_epilogue_case(g, a, static_cast<gemm_bias_t>(axis), aux == 1, turn % 5 == 0 ? 8 : 0));
                }
            }
    return cases;
}

// c's C as an FP8 kernel on the tensor cores (cuda_tiled's and cuBLASLt's) wrote it (got)
// against cpu_ref's (expected) within the tolerance rule with the tensor cores' allowance for
// each element's sum of |scaled products| (tolerance.hpp, tensor_core_fp8_share: the bound
// the measurement engine judges these kernels by), and every byte outside C's window as it
// was: "" when right, else the first problem in words.
std::string fp8_kernel_mismatch(const gemm_case &c, const operands &o, const bytes &got,
                                const std::vector<double> &expected, const reference &exact) {
    const comparison strict = compare_result(c, o, got, expected);
    if (strict.ok) return "";
    if (strict.touched > 0) return strict.first;
    gemm::tolerance_rule rule = tolerance_of(c);
    rule.product_size = o.product_size;
    rule.alpha_size *= std::fabs(o.d_scale);
    rule.beta_size *= std::fabs(o.d_scale);
    for (int64_t j = 0; j < c.n; ++j)
        for (int64_t i = 0; i < c.m; ++i) {
            const std::size_t w = std::size_t(window_index(c, 0, i, j));
            const double g = load(got.data(), c_element(c, 0, i, j), c.c_type);
            const double c0 = c.beta_zero() ? 0.0 : std::fabs(load(o.c0.data(), c_element(c, 0, i, j), c.c_type));
            const double bound = rule.element(std::fabs(expected[w]), c0, exact.abs_products[w]);
            if (std::fabs(g - expected[w]) <= bound) continue;  // false for NaN
            std::ostringstream s;
            s.precision(17);
            s << "C(i=" << i << ", j=" << j << ") = " << g << ", expected " << expected[w]
              << ", |diff| = " << std::fabs(g - expected[w]) << " > " << bound;
            return s.str();
        }
    return "";
}

// amax_d within the same bound of an element as large as the reference's amax, with the
// largest sum of |scaled products| of the matrix (before the output scale, as amax is).
std::string fp8_kernel_amax_mismatch(const gemm_case &c, const operands &o, float got, const reference &exact) {
    if (amax_mismatch(c, o, got, exact.amax).empty()) return "";
    if (std::isnan(exact.amax) || std::isnan(got)) return amax_mismatch(c, o, got, exact.amax);
    double abs_products = 0;
    for (double v : exact.abs_products) abs_products = std::max(abs_products, v);
    gemm::tolerance_rule rule = tolerance_of(c);
    rule.product_size = o.product_size;
    double c0_max = 0;
    if (!c.beta_zero())
        for (int64_t j = 0; j < c.n; ++j)
            for (int64_t i = 0; i < c.m; ++i)
                c0_max = std::max(c0_max, std::fabs(load(o.c0.data(), c_element(c, 0, i, j), c.c_type)));
    const double bound = rule.element(exact.amax, c0_max, abs_products);
    if (std::fabs(double(got) - exact.amax) <= bound) return "";
    std::ostringstream s;
    s.precision(17);
    s << "amax_d = " << got << ", expected " << exact.amax << " (tolerance " << bound << ")";
    return s.str();
}

}  // namespace

// FP8 through cublaslt on device memory: e4m3 into every C type, per-tensor scales (device
// pointers, as the operands), the TN form in both layouts (row-major N x T is the canonical
// T x N), against cpu_ref's result on host copies within the tensor cores' bound; an output
// scale or amax refused, C untouched (cuBLASLt takes them for FP8 D only); what else it
// refuses (other op pairs, block scales, host memory, e5m2 x e5m2) refused with the reason.
TEST_CASE("gpu: FP8 on cublaslt: per-tensor scales, within the tensor cores' bound; what it refuses") {
    const std::vector<std::string> names = gpu_backends();
    if (std::find(names.begin(), names.end(), "cublaslt") == names.end()) return;
    struct size3 {
        int64_t m, n, k;
    };
    const size3 sizes[] = {{64, 48, 96}, {128, 256, 512}, {16, 16, 16}, {256, 32, 4096}};
    struct scaling_config {
        gemm_scale_mode_t mode;
        bool d_scale, amax;
    };
    const scaling_config scalings[] = {
        {GEMM_SCALE_NONE, false, false}, {GEMM_SCALE_TENSOR, false, false}, {GEMM_SCALE_TENSOR, true, true}};
    selection_guard sel("cublaslt");
    int64_t skipped = 0, run = 0, refused = 0;
    for (gemm_dtype_t ct : {GEMM_BF16, GEMM_F16, GEMM_F32})
        for (const size3 &s : sizes)
            for (gemm_layout_t layout : {GEMM_COL_MAJOR, GEMM_ROW_MAJOR})
                for (const scaling_config &x : scalings)
                    for (double beta : {0.0, 0.5}) {
                        gemm_case c = fp8_tn_case(GEMM_F8_E4M3, ct, layout, s.m, s.n, s.k, 1.0, beta);
                        c.scaling_mode = x.mode;
                        c.d_scale = x.d_scale;
                        c.amax = x.amax;
                        INFO(c.describe());
                        const operands o = make_operands(c);
                        const std::vector<double> expected = cpu_ref_result(c, o);
                        const reference exact = compute_reference(c, o);
                        buffer a(memory::device, o.a), b(memory::device, o.b), cbuf(memory::device, o.c0);
                        auto as_bytes = [](const void *p, std::size_t n) {
                            const unsigned char *q = static_cast<const unsigned char *>(p);
                            return bytes(q, q + n);
                        };
                        const float amax_init = -1;
                        buffer sa(memory::device, as_bytes(o.a_scale.data(), o.a_scale.size() * sizeof(float)));
                        buffer sb(memory::device, as_bytes(o.b_scale.data(), o.b_scale.size() * sizeof(float)));
                        buffer sd(memory::device, as_bytes(&o.d_scale, sizeof(float)));
                        buffer amax(memory::device, as_bytes(&amax_init, sizeof(float)));
                        gemm_scaling_t scaling;
                        const gemm_scaling_t *sp = scaling_of(
                            c, scaling, static_cast<const float *>(sa.get()), static_cast<const float *>(sb.get()),
                            static_cast<const float *>(sd.get()), static_cast<float *>(amax.get()));
                        const gemm_status_t st = call_gemm(c, a.get(), b.get(), cbuf.get(), 0, sp);
                        const std::string error = gemm_last_error();
                        CUDA_REQUIRE(cudaDeviceSynchronize());
                        check_no_cuda_error(c.describe());
                        if (x.d_scale || x.amax) {
                            ++refused;
                            CHECK(st == GEMM_STATUS_NOT_SUPPORTED);
                            CHECK(error.find("output scale or amax") != std::string::npos);
                            CHECK(cbuf.read() == o.c0);
                            continue;
                        }
                        if (st == GEMM_STATUS_NOT_SUPPORTED) {  // counted and printed, never silent
                            ++skipped;
                            MESSAGE("cublaslt declined " << c.describe() << ": " << error);
                            continue;
                        }
                        ++run;
                        REQUIRE_MESSAGE(st == GEMM_STATUS_SUCCESS, error);
                        const std::string wrong = fp8_kernel_mismatch(c, o, cbuf.read(), expected, exact);
                        CHECK_MESSAGE(wrong.empty(), wrong);
                    }
    MESSAGE("FP8 on cublaslt: " << run << " cases run, " << skipped << " declined, " << refused
                                << " with an output scale or amax refused");
    CHECK(run > 0);

    // Refusals, each with its reason, through gemm_backend_supports.
    gemm_desc_t d;
    gemm_desc_init(&d, GEMM_F8_E4M3, GEMM_COL_MAJOR, GEMM_OP_T, GEMM_OP_N, 64, 64, 64);
    d.c_type = GEMM_BF16;
    d.device = 0;
    CHECK(gemm_backend_supports("cublaslt", &d) == GEMM_STATUS_SUCCESS);
    d.transa = GEMM_OP_N;
    CHECK(gemm_backend_supports("cublaslt", &d) == GEMM_STATUS_NOT_SUPPORTED);
    CHECK(std::string(gemm_last_error()).find("TN form") != std::string::npos);
    d.transa = GEMM_OP_T;
    d.scale_mode = GEMM_SCALE_BLOCK;
    CHECK(gemm_backend_supports("cublaslt", &d) == GEMM_STATUS_NOT_SUPPORTED);
    CHECK(std::string(gemm_last_error()).find("block scaling") != std::string::npos);
    d.scale_mode = GEMM_SCALE_TENSOR;
    d.device = -1;
    CHECK(gemm_backend_supports("cublaslt", &d) == GEMM_STATUS_NOT_SUPPORTED);
    CHECK(std::string(gemm_last_error()).find("device memory") != std::string::npos);
    d.device = 0;
    d.a_type = d.b_type = GEMM_F8_E5M2;
    CHECK(gemm_backend_supports("cublaslt", &d) == GEMM_STATUS_NOT_SUPPORTED);
    CHECK(std::string(gemm_last_error()).find("e5m2 x e5m2") != std::string::npos);
    // cuda_tiled's FP8 kernels: "cuda_tiled FP8 kernels against cpu_ref".
    for (const char *other : {"cublas", "cuda_naive"}) {
        d.a_type = d.b_type = GEMM_F8_E4M3;
        if (gemm_backend_supports(other, &d) == GEMM_STATUS_UNKNOWN_BACKEND) continue;
        CHECK_MESSAGE(gemm_backend_supports(other, &d) == GEMM_STATUS_NOT_SUPPORTED, other);
    }
}

// t's grouped call on device memory: its operands, scales, d_scale and amax_d copied to the
// device (matrix misaligned_a's A one byte into its allocation, where TMA cannot read it) and
// the call made with those pointers; then every C and amax_d read back into t and t's
// pointers at its host storage again.
gemm_status_t run_grouped_on_device(grouped_call &t, std::size_t misaligned_a = SIZE_MAX) {
    std::vector<std::unique_ptr<buffer>> held;
    auto to_device = [&](const void *p, std::size_t n, std::size_t lead = 0) {
        const unsigned char *q = static_cast<const unsigned char *>(p);
        held.push_back(std::make_unique<buffer>(memory::device, bytes(q, q + n), lead));
        return held.back()->get();
    };
    std::vector<const buffer *> cs, amaxes(t.groups.size(), nullptr);
    for (std::size_t i = 0; i < t.c.size(); ++i) {
        t.pa[i] = to_device(t.a[i].data(), t.a[i].size(), i == misaligned_a ? 1 : 0);
        t.pb[i] = to_device(t.b[i].data(), t.b[i].size());
        t.pc[i] = to_device(t.c[i].data(), t.c[i].size());
        cs.push_back(held.back().get());
    }
    for (std::size_t g = 0; g < t.groups.size(); ++g) {
        gemm_scaling_t &x = t.scalings[g];
        if (x.a_scale) x.a_scale = static_cast<const float *>(to_device(x.a_scale, t.a_scales[g].size() * 4));
        if (x.b_scale) x.b_scale = static_cast<const float *>(to_device(x.b_scale, t.b_scales[g].size() * 4));
        if (x.d_scale) x.d_scale = static_cast<const float *>(to_device(x.d_scale, sizeof(float)));
        if (x.amax_d) {
            x.amax_d = static_cast<float *>(to_device(x.amax_d, sizeof(float)));
            amaxes[g] = held.back().get();
        }
    }
    const gemm_status_t s = t.run();
    CUDA_REQUIRE(cudaDeviceSynchronize());
    for (std::size_t i = 0; i < t.c.size(); ++i) {
        t.c[i] = cs[i]->read();
        t.pa[i] = t.a[i].data(), t.pb[i] = t.b[i].data(), t.pc[i] = t.c[i].data();
    }
    for (std::size_t g = 0; g < t.groups.size(); ++g) {
        if (amaxes[g]) std::memcpy(&t.amaxes[g], amaxes[g]->read().data(), sizeof(float));
        t.point(g);
    }
    return s;
}

// Ragged groups in the form the GPU's FP8 kernels read (ta, tb: op(A) = T, op(B) = N in the
// canonical problem). cuda_tiled's: an empty group, a 1 x 1 x 1 one, primes, k and n past
// 128 (block scales change along both), tiles along m and n, several matrices whose amax_d is
// one, k = 0 (D = beta * C); each group its scaling mode, beta (0 with C NaN), d_scale and
// amax_d. cuBLASLt's: sizes of multiples of 16 (its FP8 kernels' alignment), per-tensor
// scales or none, no d_scale or amax_d (it takes them for FP8 D only).
std::vector<group_spec> device_fp8_groups(gemm_op_t ta, gemm_op_t tb, bool cublaslt) {
    if (cublaslt)
        return {{ta, tb, 16, 16, 16, 3, GEMM_SCALE_TENSOR, 1.0f, 0.0f, false, false},
                {ta, tb, 0, 16, 32, 2, GEMM_SCALE_TENSOR, 1.0f, 0.0f, false, false},
                {ta, tb, 48, 32, 64, 1, GEMM_SCALE_NONE, 1.0f, 0.5f, false, false},
                {ta, tb, 64, 128, 256, 2, GEMM_SCALE_TENSOR, -1.5f, 0.0f, false, false},
                {ta, tb, 16, 32, 0, 2, GEMM_SCALE_NONE, 1.0f, 1.5f, false, false}};
    return {{ta, tb, 0, 5, 7, 2, GEMM_SCALE_TENSOR, 1.0f, 0.0f, true, true},
            {ta, tb, 1, 1, 1, 1, GEMM_SCALE_NONE, 1.0f, 0.0f, false, true},
            {ta, tb, 7, 13, 131, 3, GEMM_SCALE_BLOCK, 0.75f, 0.0f, true, true},
            {ta, tb, 17, 3, 257, 1, GEMM_SCALE_TENSOR, -1.5f, 0.5f, false, true},
            {ta, tb, 200, 136, 300, 2, GEMM_SCALE_BLOCK, 1.0f, -2.0f, true, false},
            {ta, tb, 130, 129, 64, 3, GEMM_SCALE_TENSOR, 1.0f, 0.0f, false, true},
            {ta, tb, 3, 2, 0, 2, GEMM_SCALE_NONE, 1.0f, 1.5f, false, false}};
}

// Grouped FP8 (a mixture of experts' layer) on device memory through cuda_tiled, cublaslt
// and auto: every C against the float64 loop over the dequantized inputs within the tensor
// cores' bound, C outside its window untouched, each group's amax_d the max |D| over all its
// matrices (a launch per matrix, amax_d zeroed once per group), both layouts, every C type,
// e4m3 and e5m2 (cublaslt: e4m3). A group cuBLASLt declines is counted and printed, its C
// untouched.
TEST_CASE("gpu: grouped FP8 on device memory: cuda_tiled, cublaslt and auto against f64, amax_d per group") {
    const std::vector<std::string> names = gpu_backends();
    int64_t run = 0, declined = 0;
    for (const char *backend : {"cuda_tiled", "cublaslt", ""}) {
        if (*backend && std::find(names.begin(), names.end(), backend) == names.end()) {
            MESSAGE(backend << " not usable here, not tested");
            continue;
        }
        const bool lt = std::string(backend) == "cublaslt";
        for (gemm_dtype_t ab : {GEMM_F8_E4M3, GEMM_F8_E5M2})
            for (gemm_layout_t layout : {GEMM_COL_MAJOR, GEMM_ROW_MAJOR})
                for (gemm_dtype_t ct : {GEMM_F32, GEMM_BF16, GEMM_F16}) {
                    if (lt && ab == GEMM_F8_E5M2) continue;
                    grouped_call t;
                    t.layout = layout;
                    t.ab = ab;
                    t.ct = ct;
                    t.ld_multiple = 16;
                    const bool col = layout == GEMM_COL_MAJOR;
                    t.groups = device_fp8_groups(col ? GEMM_OP_T : GEMM_OP_N, col ? GEMM_OP_N : GEMM_OP_T, lt);
                    t.build(hash_text(t.describe()));
                    const std::string where = std::string(*backend ? backend : "auto") + " " + t.describe();
                    INFO(where);
                    REQUIRE(gemm_set_backend(*backend ? backend : nullptr) == GEMM_STATUS_SUCCESS);
                    const gemm_status_t s = run_grouped_on_device(t);
                    const std::string error = gemm_last_error();
                    gemm_set_backend(nullptr);
                    check_no_cuda_error(where);
                    if (lt && s == GEMM_STATUS_NOT_SUPPORTED) {
                        ++declined;
                        MESSAGE("cublaslt declined " << where << ": " << error);
                        CHECK(t.untouched());
                        continue;
                    }
                    REQUIRE_MESSAGE(s == GEMM_STATUS_SUCCESS, error);
                    ++run;
                    const std::string wrong = grouped_mismatch(t, gemm::tensor_core_fp8_share);
                    CHECK_MESSAGE(wrong.empty(), wrong);
                }
    }
    MESSAGE("grouped FP8 on device memory: " << run << " calls run, " << declined << " declined by cublaslt");
    CHECK(run > 0);
}

// x's masked batch on device memory: its operands, the row counts `counts` (x.rows unless the
// test passes others), scales, d_scale and amax_d copied to the device (the counts left in host
// memory with counts_on_host) and the call made with those pointers; then C and every amax_d
// read back into x.
gemm_status_t run_masked_on_device(masked_call &x, const std::vector<int32_t> &counts, bool counts_on_host = false) {
    std::vector<std::unique_ptr<buffer>> held;
    auto to_device = [&](const void *p, std::size_t n) {
        const unsigned char *q = static_cast<const unsigned char *>(p);
        held.push_back(std::make_unique<buffer>(memory::device, bytes(q, q + n)));
        return held.back()->get();
    };
    const void *a = to_device(x.a.data(), x.a.size()), *b = to_device(x.b.data(), x.b.size());
    void *c = to_device(x.c.data(), x.c.size());
    const buffer *c_held = held.back().get();
    const int32_t *rows =
        counts_on_host ? counts.data() : static_cast<const int32_t *>(to_device(counts.data(), counts.size() * 4));
    std::vector<gemm_scaling_t> scalings = x.t.scalings;
    std::vector<const buffer *> amaxes(scalings.size(), nullptr);
    for (std::size_t i = 0; i < scalings.size(); ++i) {
        gemm_scaling_t &y = scalings[i];
        if (y.a_scale) y.a_scale = static_cast<const float *>(to_device(y.a_scale, x.t.a_scales[i].size() * 4));
        if (y.b_scale) y.b_scale = static_cast<const float *>(to_device(y.b_scale, x.t.b_scales[i].size() * 4));
        if (y.d_scale) y.d_scale = static_cast<const float *>(to_device(y.d_scale, sizeof(float)));
        if (y.amax_d) {
            y.amax_d = static_cast<float *>(to_device(y.amax_d, sizeof(float)));
            amaxes[i] = held.back().get();
        }
    }
    const gemm_status_t s = x.run(a, b, c, rows, scalings.data());
    CUDA_REQUIRE(cudaDeviceSynchronize());
    x.take(c_held->read());
    for (std::size_t i = 0; i < amaxes.size(); ++i)
        if (amaxes[i]) std::memcpy(&x.t.amaxes[i], amaxes[i]->read().data(), sizeof(float));
    return s;
}

// A masked batch of experts in the form the GPU's FP8 kernels read: up to m = 200 rows (two
// tiles of 128), n = 136 (past a tile), k = 300 (block scales change along k); row counts of
// none, all, one, past a tile and between; scales per tensor, per block and none.
masked_call device_masked_batch(gemm_layout_t layout, gemm_dtype_t ab, gemm_dtype_t ct, float beta) {
    masked_call x;
    x.t.layout = layout;
    x.t.ab = ab;
    x.t.ct = ct;
    x.t.ld_multiple = 16;
    x.stride_multiple = 16;
    x.m = 200;
    x.rows = {0, 200, 1, 129, 77, 200, 0};
    const bool col = layout == GEMM_COL_MAJOR;
    const group_spec e = {col ? GEMM_OP_T : GEMM_OP_N,
                          col ? GEMM_OP_N : GEMM_OP_T,
                          0,
                          136,
                          300,
                          1,
                          GEMM_SCALE_TENSOR,
                          0.75f,
                          beta,
                          true,
                          true};
    std::vector<group_spec> specs(x.rows.size(), e);
    specs[1].mode = specs[3].mode = GEMM_SCALE_BLOCK;
    specs[2].mode = GEMM_SCALE_NONE;
    specs[4].d_scale = false;
    specs[5].amax = false;
    x.t.groups = specs;
    x.build(specs, hash_text(x.t.describe()));
    return x;
}

// Masked FP8 batches (experts whose token counts the device holds) through cuda_tiled and
// auto: each matrix's rows against the float64 loop within the tensor cores' bound, its other
// rows and the bytes between the matrices untouched, amax_d 0 where it computes no row; counts
// beyond m taken as m and negative ones as 0 (the kernels cannot report them); both layouts
// (the mask on the canonical m, and on n for row-major), every C type, e4m3 and e5m2.
TEST_CASE("gpu: masked FP8 batch on device memory: cuda_tiled and auto compute each matrix's rows") {
    const std::vector<std::string> names = gpu_backends();
    if (std::find(names.begin(), names.end(), "cuda_tiled") == names.end()) {
        MESSAGE("cuda_tiled not usable here, not tested");
        return;
    }
    int runs = 0;
    for (const char *backend : {"cuda_tiled", ""})
        for (gemm_dtype_t ab : {GEMM_F8_E4M3, GEMM_F8_E5M2})
            for (gemm_layout_t layout : {GEMM_COL_MAJOR, GEMM_ROW_MAJOR})
                for (gemm_dtype_t ct : {GEMM_F32, GEMM_BF16, GEMM_F16}) {
                    masked_call x = device_masked_batch(layout, ab, ct, runs % 2 ? 0.5f : 0.0f);
                    std::vector<int32_t> counts = x.rows;
                    counts[5] = 1000;  // beyond m: all 200 rows
                    counts[6] = -7;    // negative: none
                    const std::string where = std::string(*backend ? backend : "auto") + " " + x.t.describe();
                    INFO(where);
                    REQUIRE(gemm_set_backend(*backend ? backend : nullptr) == GEMM_STATUS_SUCCESS);
                    const gemm_status_t s = run_masked_on_device(x, counts);
                    const std::string error = gemm_last_error();
                    gemm_set_backend(nullptr);
                    check_no_cuda_error(where);
                    REQUIRE_MESSAGE(s == GEMM_STATUS_SUCCESS, error);
                    ++runs;
                    const std::string wrong = x.mismatch(gemm::tensor_core_fp8_share);
                    CHECK_MESSAGE(wrong.empty(), wrong);
                }
    MESSAGE("masked FP8 on device memory: " << runs << " calls checked");
}

// Masked FP8 batches that no kernel here serves, each refused with its reason and every C
// untouched: cublaslt (no row count on the device), cublas and cuda_naive (no FP8), the CPU
// backends (device pointers), cuda_tiled's skinny kernels asked by id, cuda_tiled with k = 0
// (the GEMM kernels read the counts); and counts in host memory beside device operands.
TEST_CASE("gpu: masked FP8 batch on device memory: refusals leave every C untouched") {
    const struct {
        const char *backend, *reason;
    } refusals[] = {{"cublaslt", "masked batch"},         {"cublas", "cuBLAS has no FP8 GEMM"},
                    {"cuda_naive", "e4m3 not supported"}, {"cpu_ref", "needs host pointers"},
                    {"cpu_omp", "needs host pointers"},   {"cuda_tiled:skinny_e4m3_16x16", "masked batch"}};
    for (const auto &r : refusals) {
        if (gemm_set_backend(r.backend) != GEMM_STATUS_SUCCESS) {
            MESSAGE(r.backend << " not usable here, not tested: " << gemm_last_error());
            continue;
        }
        masked_call x = device_masked_batch(GEMM_ROW_MAJOR, GEMM_F8_E4M3, GEMM_BF16, 0.0f);
        const gemm_status_t s = run_masked_on_device(x, x.rows);
        const std::string error = gemm_last_error();
        gemm_set_backend(nullptr);
        CHECK_MESSAGE(s == GEMM_STATUS_NOT_SUPPORTED, r.backend << ": " << error);
        CHECK_MESSAGE(error.find(r.reason) != std::string::npos, r.backend << ": " << error);
        CHECK_MESSAGE(x.untouched(), r.backend);
        check_no_cuda_error(r.backend);
    }
    const std::vector<std::string> names = gpu_backends();
    if (std::find(names.begin(), names.end(), "cuda_tiled") == names.end()) return;
    {
        masked_call x = device_masked_batch(GEMM_COL_MAJOR, GEMM_F8_E4M3, GEMM_F32, 0.5f);
        const gemm_status_t s = run_masked_on_device(x, x.rows, true);
        CHECK_MESSAGE(s == GEMM_STATUS_MIXED_MEMORY_SPACES, gemm_last_error());
        CHECK_MESSAGE(std::string(gemm_last_error()).find("parameter 22: rows is in host memory") != std::string::npos,
                      gemm_last_error());
        CHECK(x.untouched());
    }
    {
        masked_call x;
        x.t.ld_multiple = 16;
        x.stride_multiple = 16;
        x.m = 32;
        x.rows = {3, 32};
        const group_spec e = {GEMM_OP_T, GEMM_OP_N, 0, 16, 0, 1, GEMM_SCALE_NONE, 1.0f, 0.5f, false, false};
        x.t.groups = {e, e};
        x.build({e, e}, 65);
        REQUIRE(gemm_set_backend("cuda_tiled") == GEMM_STATUS_SUCCESS);
        const gemm_status_t s = run_masked_on_device(x, x.rows);
        const std::string error = gemm_last_error();
        gemm_set_backend(nullptr);
        CHECK_MESSAGE(s == GEMM_STATUS_NOT_SUPPORTED, error);
        CHECK_MESSAGE(error.find("masked batch with k = 0") != std::string::npos, error);
        CHECK(x.untouched());
    }
    check_no_cuda_error("masked refusals");
}

// Grouped FP8 on device memory where no FP8 kernel is: cublas, cuda_naive and cublasxt forced
// refuse it with their reason, as do the CPU backends (device pointers); and a group cuda_tiled
// cannot serve whole (a later matrix's A not 16-byte aligned) is refused before any matrix
// runs. Every C and amax_d untouched.
TEST_CASE("gpu: grouped FP8 on device memory: backends without FP8 kernels refuse it, C untouched") {
    grouped_call t;
    t.ld_multiple = 16;
    t.groups = {{GEMM_OP_T, GEMM_OP_N, 16, 16, 32, 2, GEMM_SCALE_TENSOR, 1.0f, 0.0f, false, true},
                {GEMM_OP_T, GEMM_OP_N, 16, 16, 32, 1, GEMM_SCALE_TENSOR, 1.0f, 0.5f, false, false}};
    t.build(62);
    const struct {
        const char *name, *reason;
    } backends[] = {{"cublas", "cuBLAS has no FP8 GEMM"},
                    {"cuda_naive", "e4m3 not supported"},
                    {"cublasxt", "cublasxt takes host memory"},
                    {"cpu_ref", "needs host pointers"},
                    {"cpu_omp", "needs host pointers"}};
    for (const auto &backend : backends) {
        if (gemm_set_backend(backend.name) != GEMM_STATUS_SUCCESS) {
            MESSAGE(backend.name << " not usable here, not tested: " << gemm_last_error());
            continue;
        }
        const gemm_status_t s = run_grouped_on_device(t);
        const std::string error = gemm_last_error();
        gemm_set_backend(nullptr);
        CHECK_MESSAGE(s == GEMM_STATUS_NOT_SUPPORTED, backend.name << ": " << error);
        CHECK_MESSAGE(error.find(backend.reason) != std::string::npos, backend.name << ": " << error);
        CHECK_MESSAGE(t.untouched(), backend.name);
        check_no_cuda_error(backend.name);
    }
    const std::vector<std::string> names = gpu_backends();
    if (std::find(names.begin(), names.end(), "cuda_tiled") == names.end()) return;
    REQUIRE(gemm_set_backend("cuda_tiled") == GEMM_STATUS_SUCCESS);
    const gemm_status_t s = run_grouped_on_device(t, 1);
    const std::string error = gemm_last_error();
    gemm_set_backend(nullptr);
    CHECK_MESSAGE(s == GEMM_STATUS_NOT_SUPPORTED, error);
    CHECK_MESSAGE(error.find("matrix 1 of group 0") != std::string::npos, error);
    CHECK_MESSAGE(error.find("16-byte aligned") != std::string::npos, error);
    CHECK(t.untouched());
    check_no_cuda_error("cuda_tiled, a misaligned A");
}

TEST_CASE("gpu: epilogues on device and host memory, every GPU backend, against the reference") {
    tally tl;
    for (const epilogue_case &e : gpu_epilogue_cases()) {
        if (!case_selected(e.describe())) continue;
        const epilogue_operands o = make_epilogue_operands(e);
        for (const std::string &name : batch_selections()) {
            selection_guard sel(name);
            for (memory kind : {memory::device, memory::host}) {
                if (!takes_device_pointers(name) && !is_host(kind)) continue;
                const epilogue_result r = run_epilogue_in(kind, e, o);
                const std::string where = name + " " + memory_name(kind) + " " + e.describe();
                check_no_cuda_error(where);
                if (r.status == GEMM_STATUS_NOT_SUPPORTED && !must_support(name, e.gemm, kind)) {
                    tl.skipped.add(name, e.gemm);
                    continue;
                }
                REQUIRE_MESSAGE(r.status == GEMM_STATUS_SUCCESS, where << ": " << r.error);
                const std::string problem = check_epilogue_result(e, o, r);
                CHECK_MESSAGE(problem.empty(),
                              where << ": " << problem << "\n  rerun: GEMM_TEST_FILTER='" << e.describe() << "'");
                ++tl.checked;
            }
        }
    }
    report(tl);
}

// GELU and its slope of a large finite value whose cube overflows f32 are the saturated values
// (the slope 1 or 0), never NaN from 0 times an infinite cube, on device and host memory,
// every GPU backend: the device pass (epilogue_pass.cu) and cuBLASLt's fused epilogue alike.
TEST_CASE("gpu: GELU and its slope of large finite f32 values, device and host memory, every GPU backend") {
    const std::vector<float> values = {1e13f, -1e13f, 1e30f, -1e30f, 3.0e38f, -3.0e38f, 2.0f, -0.5f};
    const int64_t m = int64_t(values.size());
    const std::vector<float> ones(values.size(), 1.0f), poison(values.size(), -7.0f);
    const float one = 1.0f, zero = 0.0f;
    int checked = 0;
    for (const std::string &name : gpu_backends()) {
        selection_guard sel(name);
        for (memory kind : {memory::device, memory::host}) {
            for (gemm_activation_t act : {GEMM_ACTIVATION_GELU, GEMM_ACTIVATION_GELU_BACKWARD}) {
                const bool backward = act == GEMM_ACTIVATION_GELU_BACKWARD;
                // Z = A * 1: the values, or ones whose slope is taken at aux = the values.
                buffer a(kind, bytes_of(backward ? ones : values)), b(kind, bytes_of(std::vector<float>{1.0f})),
                    aux(kind, bytes_of(values)), c(kind, bytes_of(poison));
                gemm_epilogue_t e;
                gemm_epilogue_init(&e);
                e.activation = act;
                e.aux = backward ? aux.get() : nullptr;
                e.ld_aux = backward ? m : 0;
                const gemm_status_t st =
                    gemm_ex_epilogue(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, m, 1, 1, &one, a.get(), GEMM_F32, m, b.get(),
                                     GEMM_F32, 1, &zero, c.get(), GEMM_F32, m, GEMM_F32, &e);
                const std::string where = name + " " + memory_name(kind) + (backward ? " GELU backward" : " GELU");
                CUDA_REQUIRE(cudaDeviceSynchronize());
                if (st == GEMM_STATUS_NOT_SUPPORTED) continue;  // not this backend's memory or epilogue
                REQUIRE_MESSAGE(st == GEMM_STATUS_SUCCESS, where << ": " << gemm_last_error());
                const bytes out_bytes = c.read();
                std::vector<float> out(values.size());
                std::memcpy(out.data(), out_bytes.data(), out_bytes.size());
                for (std::size_t i = 0; i < values.size(); ++i) {
                    const double x = values[i], want = backward ? detail::gelu_slope(x) : detail::gelu(x);
                    CHECK_MESSAGE(std::fabs(double(out[i]) - want) <= 1e-5 * std::max(1.0, std::fabs(want)),
                                  where << " of " << x << ": " << out[i] << ", want " << want);
                }
                ++checked;
            }
        }
    }
    CHECK(checked >= 4);  // cublas and cublaslt take both activations on both memories
}

// One process with GEMM_VERBOSE=1: cuBLASLt fuses on device memory what it has an epilogue
// for, and the library's pass serves the rest and every other backend.
TEST_SUITE("gpu_epilogue_trace" * doctest::skip()) {
    TEST_CASE("gpu_epilogue_trace: cuBLASLt fuses bias + GELU + aux on device memory; cublas takes the pass") {
        gemm_case g =
            make_case(GEMM_BF16, GEMM_BF16, entry::ex, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_T, 64, 128, 256, 0, 1.0, 0.0);
        struct expectation {
            const char *backend;
            gemm_bias_t axis;
            const char *trace;
        };
        const expectation cases[] = {
            {"cublaslt", GEMM_BIAS_COLUMNS, " epilogue=gelu+bias(columns)+aux:fused"},
            {"cublaslt", GEMM_BIAS_ROWS, " epilogue=gelu+bias(rows)+aux:pass"},  // cuBLASLt's bias runs one way
            {"cublas", GEMM_BIAS_COLUMNS, " epilogue=gelu+bias(columns)+aux:pass"}};
        for (const expectation &x : cases) {
            if (!case_selected(x.backend)) continue;
            const epilogue_case e = make_epilogue_case(g, GEMM_ACTIVATION_GELU, x.axis, true, 0);
            const epilogue_operands o = make_epilogue_operands(e);
            selection_guard sel(x.backend);
            std::vector<std::string> lines;
            epilogue_result r;
            {
                stderr_capture capture;
                r = run_epilogue_in(memory::device, e, o);
                lines = capture.lines();
            }
            REQUIRE_MESSAGE(r.status == GEMM_STATUS_SUCCESS, r.error);
            CHECK(check_epilogue_result(e, o, r).empty());
            REQUIRE(lines.size() == 1);
            INFO("trace: " << lines[0]);
            CHECK(lines[0].find(x.trace) != std::string::npos);
        }
    }
}

// A plan that checks its pointers (desc->check_pointers, or every plan under
// GEMM_CHECK_POINTERS=1) refuses operands in other memory than its desc names, C unchanged.
void check_plan_refusals(bool desc_flag) {
    gemm_case c = base_case({GEMM_F32, GEMM_F32}, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 8, 9, 10);
    set_leading_dims(c, 0);
    c.beta = 1.0;
    c.api = entry::plan;
    c.check_pointers = desc_flag;
    operands o = make_operands(c);
    for (const std::string &spec : {std::string("auto"), std::string("cublas"), std::string("cuda_tiled")}) {
        selection_guard sel(spec);
        {  // a device plan, host operands
            bytes host_c = o.c0;
            gemm_status_t s = call_gemm(c, o.a.data(), o.b.data(), host_c.data(), 0);
            CHECK_MESSAGE(s == GEMM_STATUS_MIXED_MEMORY_SPACES,
                          spec << ": status " << int(s) << ": " << gemm_last_error());
            CHECK_MESSAGE(std::string(gemm_last_error())
                                  .find("the operands are host memory, but the plan was made for "
                                        "device memory of device 0") != std::string::npos,
                          gemm_last_error());
            CHECK(host_c == o.c0);
        }
        {  // a host plan, device operands
            buffer a(memory::device, o.a), b(memory::device, o.b), cbuf(memory::device, o.c0);
            gemm_status_t s = call_gemm(c, a.get(), b.get(), cbuf.get(), -1);
            CHECK_MESSAGE(s == GEMM_STATUS_MIXED_MEMORY_SPACES,
                          spec << ": status " << int(s) << ": " << gemm_last_error());
            CHECK(cbuf.read() == o.c0);
        }
        {  // a device plan, managed operands: the device reads them
            buffer a(memory::managed, o.a), b(memory::managed, o.b), cbuf(memory::managed, o.c0);
            gemm_status_t s = call_gemm(c, a.get(), b.get(), cbuf.get(), 0);
            REQUIRE_MESSAGE(s == GEMM_STATUS_SUCCESS, spec << ": status " << int(s) << ": " << gemm_last_error());
            CUDA_REQUIRE(cudaDeviceSynchronize());
            CHECK(compare_result(c, o, cbuf.read(), cpu_ref_result(c, o)).ok);
        }
        check_no_cuda_error(spec);
    }
}

TEST_CASE("gpu: a plan made with desc->check_pointers = 1 refuses operands in other memory than its desc says") {
    check_plan_refusals(true);
}

// Run as its own process with GEMM_CHECK_POINTERS=1 (CTest: gpu.check_pointers).
TEST_SUITE("gpu_check_pointers" * doctest::skip()) {
    TEST_CASE("gpu_check_pointers: GEMM_CHECK_POINTERS=1 makes every plan refuse operands in other memory") {
        const char *check = std::getenv("GEMM_CHECK_POINTERS");
        REQUIRE_MESSAGE((check && std::string(check) == "1"),
                        "run with GEMM_CHECK_POINTERS=1 (CTest: gpu.check_pointers)");
        check_plan_refusals(false);
    }
}

// A device plan run, and a device call, inside stream capture: recorded into a CUDA graph
// without synchronizing, allocating or failing, and the replayed graph computes C.
TEST_CASE("gpu: plan runs and calls captured into a CUDA graph give the same C when replayed") {
    gemm_case c = base_case({GEMM_F32, GEMM_F32}, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_T, 65, 33, 47);
    set_leading_dims(c, 1);
    c.alpha = 0.5;
    c.beta = -1.0;
    operands o = make_operands(c);
    std::vector<double> expected = cpu_ref_result(c, o);
    cudaStream_t stream = nullptr;
    CUDA_REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    for (const std::string &spec : {std::string("auto"), std::string("cublas"), std::string("cublaslt"),
                                    std::string("cuda_tiled"), std::string("cuda_naive")})
        for (entry api : {entry::plan, entry::ex}) {
            selection_guard sel(spec);
            gemm_case run = c;
            run.api = api;
            std::string where = spec + (api == entry::plan ? " plan" : " call");
            buffer a(memory::device, o.a), b(memory::device, o.b), cbuf(memory::device, o.c0);
            // The plan is made outside the capture: making one may tune or load a library.
            gemm_plan_t plan = nullptr;
            if (api == entry::plan) {
                gemm_desc_t d;
                gemm_desc_init(&d, GEMM_F32, c.layout, c.transa, c.transb, c.m, c.n, c.k);
                d.lda = c.lda;
                d.ldb = c.ldb;
                d.ldc = c.ldc;
                d.device = 0;
                REQUIRE_MESSAGE(gemm_plan_create(&d, &plan) == GEMM_STATUS_SUCCESS, where << ": " << gemm_last_error());
            } else {  // a first call outside the capture sets up the thread's handle
                bytes scratch_c = o.c0;
                buffer scratch(memory::device, scratch_c);
                gemm_set_stream(stream);
                REQUIRE_MESSAGE(call_gemm(run, a.get(), b.get(), scratch.get(), 0) == GEMM_STATUS_SUCCESS,
                                where << ": " << gemm_last_error());
                gemm_set_stream(nullptr);
                CUDA_REQUIRE(cudaStreamSynchronize(stream));
            }
            float alpha = float(c.alpha), beta = float(c.beta);
            CUDA_REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
            gemm_set_stream(stream);
            gemm_status_t s = api == entry::plan ? gemm_plan_run(plan, &alpha, a.get(), b.get(), &beta, cbuf.get())
                                                 : call_gemm(run, a.get(), b.get(), cbuf.get(), 0);
            std::string error = gemm_last_error();
            gemm_set_stream(nullptr);
            cudaGraph_t graph = nullptr;
            cudaError_t captured = cudaStreamEndCapture(stream, &graph);
            gemm_plan_destroy(plan);
            CHECK_MESSAGE(s == GEMM_STATUS_SUCCESS, where << " inside capture: status " << int(s) << ": " << error);
            CHECK_MESSAGE(captured == cudaSuccess, where << ": cudaStreamEndCapture: " << cudaGetErrorString(captured));
            if (s != GEMM_STATUS_SUCCESS || captured != cudaSuccess) {
                cudaGetLastError();
                if (graph) cudaGraphDestroy(graph);
                continue;
            }
            CHECK(cbuf.read() == o.c0);  // captured, not run
            cudaGraphExec_t exec = nullptr;
            CUDA_REQUIRE(cudaGraphInstantiate(&exec, graph, 0));
            CUDA_REQUIRE(cudaGraphLaunch(exec, stream));
            CUDA_REQUIRE(cudaStreamSynchronize(stream));
            comparison cmp = compare_result(c, o, cbuf.read(), expected);
            CHECK_MESSAGE(cmp.ok, where << " replayed: " << cmp.first);
            cudaGraphExecDestroy(exec);
            cudaGraphDestroy(graph);
            check_no_cuda_error(where);
        }
    cudaStreamDestroy(stream);
}

TEST_CASE("gpu: cuda_naive refuses f16 and bf16 with a reason") {
    selection_guard sel("cuda_naive");
    for (type_pair t : {type_pair{GEMM_F16, GEMM_F16}, type_pair{GEMM_BF16, GEMM_F32}}) {
        gemm_case c = base_case(t, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 4, 4, 4);
        set_leading_dims(c, 0);
        operands o = make_operands(c);
        buffer a(memory::device, o.a), b(memory::device, o.b), cbuf(memory::device, o.c0);
        gemm_status_t s = call_gemm(c, a.get(), b.get(), cbuf.get());
        CHECK(s == GEMM_STATUS_NOT_SUPPORTED);
        CHECK(std::string(gemm_last_error()).find("not supported") != std::string::npos);
        CHECK(cbuf.read() == o.c0);
        check_no_cuda_error("cuda_naive f16");
    }
}

namespace {

bool has_backend(const std::string &name) {
    std::vector<std::string> names = gpu_backends();
    return std::find(names.begin(), names.end(), name) != names.end();
}

// Device copies of o with every base pointer `offset` elements past a 256-byte boundary; C read
// back without the offset.
run_result run_device_offset(const gemm_case &c, const operands &o, int offset) {
    // Each operand by its own element size: an f32 C of f16 inputs moves 4 bytes, not 2.
    const std::size_t ab_shift = std::size_t(offset) * dtype_size(c.ab_type);
    const std::size_t c_shift = std::size_t(offset) * dtype_size(c.c_type);
    auto place = [&](const bytes &init, void *&base, std::size_t shift) {
        CUDA_REQUIRE(cudaMalloc(&base, init.size() + shift + 1));
        CUDA_REQUIRE(upload(static_cast<char *>(base) + shift, init.data(), init.size()));
        return static_cast<char *>(base) + shift;
    };
    void *a = nullptr, *b = nullptr, *cb = nullptr;
    run_result r;
    r.status = call_gemm(c, place(o.a, a, ab_shift), place(o.b, b, ab_shift), place(o.c0, cb, c_shift));
    r.error = gemm_last_error();
    r.c.resize(o.c0.size());
    CUDA_REQUIRE(cudaMemcpy(r.c.data(), static_cast<char *>(cb) + c_shift, r.c.size(), cudaMemcpyDeviceToHost));
    cudaFree(a), cudaFree(b), cudaFree(cb);
    return r;
}

// The verdict on one variant's run: it succeeded, its C matches cpu_ref's, and it left no
// CUDA error behind. `where` names the variant, memory and case in every message.
void check_variant_run(const std::string &where, const gemm_case &c, const operands &o, const run_result &r,
                       const std::vector<double> &expected) {
    REQUIRE_MESSAGE(r.status == GEMM_STATUS_SUCCESS, where << ": " << r.error);
    comparison cmp = compare_result(c, o, r.c, expected);
    CHECK_MESSAGE(cmp.ok, where << ": " << cmp.first);
    check_no_cuda_error(where);
}

// The ids cuda_tiled offers: all of this build's (desc NULL), or those worth timing for desc.
std::vector<std::string> cuda_tiled_offers(const gemm_desc_t *desc) {
    const char *const *list = nullptr;
    int64_t count = 0;
    REQUIRE_MESSAGE(gemm_backend_variants("cuda_tiled", desc, &list, &count) == GEMM_STATUS_SUCCESS, gemm_last_error());
    return std::vector<std::string>(list, list + count);
}

bool has(const std::vector<std::string> &v, const std::string &x) {
    return std::find(v.begin(), v.end(), x) != v.end();
}

// Every id of this build that begins with prefix, in the backend's order: the tests run what the
// kernel table holds, so a line added there is tested without naming it here.
std::vector<std::string> ids_with_prefix(const std::string &prefix) {
    std::vector<std::string> ids;
    for (const std::string &id : cuda_tiled_offers(nullptr))
        if (id.compare(0, prefix.size(), prefix) == 0) ids.push_back(id);
    return ids;
}

bool ends_with(const std::string &s, const std::string &tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

// Every kernel configuration by id (the correctness matrix runs only the default one): full
// tiles, ragged edges with m and n not multiples of the 16-byte vector (no vector may straddle
// the edge), leading dimensions and base pointers that are not 16-byte aligned (vector ids must
// run their scalar twins), on all four op combinations.
TEST_CASE("gpu: cuda_tiled every variant id, aligned and not, against cpu_ref") {
    if (!has_backend("cuda_tiled")) {
        MESSAGE("cuda_tiled not available or not selected: not tested");
        return;
    }
    struct shape {
        int64_t m, n, k, pad;
        int offset;
        double alpha, beta;
    };
    const shape shapes[] = {{256, 128, 64, 0, 0, 1.0, 0.0},   // whole tiles, aligned
                            {130, 67, 37, 0, 0, -0.75, 0.5},  // ragged, m % 4 = 2, n odd
                            {96, 100, 33, 1, 0, 1.0, 0.0},    // lda, ldb, ldc not 16-byte multiples
                            {72, 136, 40, 0, 1, 0.5, -1.0}};  // base pointers 1 element off
    int64_t checked = 0;
    // Every id of ids on every op pair and shape of type pair t.
    auto check_ids = [&](type_pair t, const std::vector<std::string> &ids) {
        for (gemm_op_t ta : {GEMM_OP_N, GEMM_OP_T})
            for (gemm_op_t tb : {GEMM_OP_N, GEMM_OP_T})
                for (const shape &sh : shapes) {
                    gemm_case c = base_case(t, GEMM_COL_MAJOR, ta, tb, sh.m, sh.n, sh.k);
                    set_leading_dims(c, sh.pad);
                    c.alpha = sh.alpha;
                    c.beta = sh.beta;
                    operands o = make_operands(c);
                    std::vector<double> expected = cpu_ref_result(c, o);
                    for (const std::string &id : ids) {
                        selection_guard sel("cuda_tiled:" + id);
                        run_result r = run_device_offset(c, o, sh.offset);
                        check_variant_run(id + " offset " + std::to_string(sh.offset) + " " + c.describe(), c, o, r,
                                          expected);
                        ++checked;
                    }
                }
    };
    // The textbook and register-tiled ids of f32 and f64 (each vector id with its scalar twin), and
    // the wmma ids of f16 and bf16 with C in their type and in f32.
    int64_t ids_run = 0;
    for (type_pair t : {type_pair{GEMM_F32, GEMM_F32}, type_pair{GEMM_F64, GEMM_F64}}) {
        const std::string type = t.ab == GEMM_F32 ? "f32_" : "f64_";
        std::vector<std::string> ids = ids_with_prefix("textbook_" + type);
        const std::vector<std::string> tiled = ids_with_prefix("tiled_" + type);
        CHECK_MESSAGE(ids.size() >= 2, type);
        CHECK_MESSAGE(
            std::count_if(tiled.begin(), tiled.end(), [](const std::string &id) { return ends_with(id, "_a1"); }) * 2 ==
                int64_t(tiled.size()),
            type << ": a scalar twin for each vector id");
        ids.insert(ids.end(), tiled.begin(), tiled.end());
        check_ids(t, ids);
        ids_run += int64_t(ids.size());
    }
    // The tensor-core kernel: f16 and bf16 inputs, C in their type or f32.
    for (type_pair t : {type_pair{GEMM_F16, GEMM_F16}, type_pair{GEMM_F16, GEMM_F32}, type_pair{GEMM_BF16, GEMM_BF16},
                        type_pair{GEMM_BF16, GEMM_F32}}) {
        const std::vector<std::string> ids =
            ids_with_prefix(std::string("mma_") + (t.ab == GEMM_F16 ? "f16_" : "bf16_"));
        CHECK(ids.size() == 1);
        check_ids(t, ids);
        ids_run += int64_t(ids.size());
    }
    MESSAGE(checked << " cuda_tiled variant runs checked");
    // Each id on every op pair and shape.
    CHECK(checked == 4 * 4 * ids_run);
}

namespace {

bool device_0_is_sm90() {
    int major = 0, minor = 0;
    CUDA_REQUIRE(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
    CUDA_REQUIRE(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
    return major == 9 && minor == 0;
}

struct wgmma_shape {
    int64_t m, n, k, batch;
    double alpha, beta;
    bool odd_c;  // C's leading dimension and batch stride odd, else multiples of 8 elements
};
const wgmma_shape wgmma_shapes[] = {{256, 128, 64, 1, 1.0, 0.0, false},     // whole tiles
                                    {130, 67, 37, 1, -0.75, 0.5, true},     // ragged, k < one step
                                    {1, 1, 1, 1, 2.0, 0.0, true},           // one element
                                    {1100, 130, 1000, 1, 1.0, 1.0, false},  // 16 k steps, a raster group of 1
                                    {77, 300, 257, 1, 0.5, 0.0, true},      // ragged every way
                                    {200, 150, 96, 3, 1.0, -1.0, true},     // strided batch
                                    {300, 260, 72, 40, 1.0, 0.5, false},    // more tiles than SMs
                                    {999, 1, 4096, 1, 1.0, 0.0, false},     // decode: split k, one column, m odd
                                    {260, 70, 3170, 1, -1.0, 0.5, true},    // split k, a shorter last range
                                    {136, 40, 1500, 2, 0.5, 0.0, false}};   // split k over a batch
// The tiles of this build's wgmma ids of one type (f16, bf16 or tf32): each id less its
// "wgmma_<type>" prefix.
std::vector<std::string> wgmma_tiles(const std::string &type) {
    const std::string prefix = "wgmma_" + type;
    std::vector<std::string> tiles;
    for (const std::string &id : ids_with_prefix(prefix + "_")) tiles.push_back(id.substr(prefix.size()));
    return tiles;
}
// The tiles of fewer than 64 columns (_<BM>x<BN>x...) copy fewer rows of op(B)^T a stage than
// TMA's 64-row boxes of an operand stored along its rows: they need op(B)^T stored along k,
// column-major op(B) = N.
bool narrow_tile(const std::string &tile) { return std::stoi(tile.substr(tile.find('x') + 1)) < 64; }

// A column-major case of the shape whose A and B are 16-byte aligned (leading dimensions and
// strides multiples of 8 elements, lda padded when m is odd), C's leading dimension and stride
// odd or padded multiples of 8 elements (the epilogue's 4-element stores).
gemm_case wgmma_case(type_pair t, gemm_op_t ta, gemm_op_t tb, const wgmma_shape &sh) {
    auto round8 = [](int64_t v) { return (v + 7) / 8 * 8; };
    gemm_case c = base_case(t, GEMM_COL_MAJOR, ta, tb, sh.m, sh.n, sh.k);
    c.alpha = sh.alpha;
    c.beta = sh.beta;
    c.lda = round8(c.a().rows) + (sh.m % 2 ? 8 : 0);
    c.ldb = round8(c.b().rows);
    c.ldc = sh.odd_c ? sh.m + 3 : round8(sh.m) + 8;
    if (sh.batch > 1) {
        c.strided_entry = true;
        c.batch = sh.batch;
        c.stride_a = round8(c.a().footprint()) + 8;
        c.stride_b = round8(c.b().footprint());
        c.stride_c = sh.odd_c ? c.c().footprint() + 5 : round8(c.c().footprint()) + 8;
    }
    return c;
}

// The run forced onto a cuda_tiled id (cpu_ref_result selects cpu_ref for itself, then auto).
run_result run_forced(const std::string &id, const gemm_case &c, const operands &o, int offset) {
    selection_guard sel("cuda_tiled:" + id);
    return run_device_offset(c, o, offset);
}

// Each id `prefix + tile` on c against cpu_ref, and with host also on host memory (staged to
// the current device, the same kernel); the runs checked. The narrow tiles (narrow_tile) refuse
// c where op(B) = T: NOT_SUPPORTED for that reason, C unchanged (counted in `refused`).
int64_t check_wgmma_ids(const std::string &prefix, const std::vector<std::string> &tiles, const gemm_case &c,
                        const operands &o, bool host, int64_t &refused) {
    const std::vector<double> expected = cpu_ref_result(c, o);
    int64_t checked = 0;
    for (const std::string &tile : tiles) {
        const std::string id = prefix + tile;
        if (narrow_tile(tile) && c.transb != GEMM_OP_N) {
            const run_result r = run_forced(id, c, o, 0);
            CHECK_MESSAGE(r.status == GEMM_STATUS_NOT_SUPPORTED, id << " " << c.describe() << ": " << r.error);
            CHECK_MESSAGE(r.error.find("not stored along k") != std::string::npos, r.error);
            CHECK(r.c == o.c0);
            ++refused;
            continue;
        }
        check_variant_run(id + " " + c.describe(), c, o, run_forced(id, c, o, 0), expected);
        ++checked;
        if (!host) continue;
        selection_guard sel("cuda_tiled:" + id);
        check_variant_run(id + " host " + c.describe(), c, o, run_in(memory::host, c, o, nullptr), expected);
        ++checked;
    }
    return checked;
}

// Each id `prefix + tile` refuses column-major TN 64^3 of type t with B's leading dimension
// not a multiple of 16 bytes, and with every base 1 element off 16 bytes: NOT_SUPPORTED (on a
// 9.0 device for that reason), C unchanged, no CUDA error left; the refusals.
int64_t check_wgmma_misaligned(const std::string &prefix, const std::vector<std::string> &tiles, type_pair t,
                               bool hopper) {
    gemm_case c = base_case(t, GEMM_COL_MAJOR, GEMM_OP_T, GEMM_OP_N, 64, 64, 64);
    c.lda = c.ldb = c.ldc = 64;
    gemm_case odd_ld = c;
    odd_ld.ldb = 66;
    int64_t refused = 0;
    for (const std::string &tile : tiles)
        for (auto [x, offset] : {std::pair{odd_ld, 0}, std::pair{c, 1}}) {
            const std::string id = prefix + tile;
            const operands o = make_operands(x);
            run_result r = run_forced(id, x, o, offset);
            const std::string where = id + " " + x.describe() + " offset " + std::to_string(offset);
            CHECK_MESSAGE(r.status == GEMM_STATUS_NOT_SUPPORTED, where << ": " << r.error);
            if (hopper) CHECK_MESSAGE(r.error.find("16-byte aligned") != std::string::npos, where << ": " << r.error);
            CHECK_MESSAGE(r.c == o.c0, where << ": C changed");
            check_no_cuda_error(where);
            ++refused;
        }
    return refused;
}

}  // namespace

// The Hopper kernels by id, where the device and the build have them: every op pair (each
// operand stored along k or along m / n), ragged m, n, k (TMA's boxes past the edges read
// zeros, the epilogue's stores are predicated), C aligned (4 elements a store) or not (one), k
// steps past the stages' ring, partial raster groups, strided batches, more tiles than SMs
// (each block then takes several), k split into ranges by the _splitk ids (one column of C, a
// shorter last range, over a batch, beta != 0 applied once by the reduction); and their
// refusals (leading dimensions or bases not 16-byte aligned; f32 unless TF32 is allowed), C
// unchanged.
TEST_CASE("gpu: cuda_tiled wgmma kernels against cpu_ref, and what they refuse") {
    if (!has_backend("cuda_tiled")) {
        MESSAGE("cuda_tiled not available or not selected: not tested");
        return;
    }
    if (!has(cuda_tiled_offers(nullptr), "wgmma_bf16_128x128x64_s6")) {
        MESSAGE("this build has no wgmma kernel (CUDA before 12.0): not tested");
        return;
    }
    const bool hopper = device_0_is_sm90();
    // A tuner candidate where it computes the problem, and only there.
    gemm_desc_t desc;
    gemm_desc_init(&desc, GEMM_BF16, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_T, 512, 512, 512);
    desc.device = 0;
    CHECK(has(cuda_tiled_offers(&desc), "wgmma_bf16_128x128x64_s6") == hopper);
    CHECK(has(cuda_tiled_offers(&desc), "wgmma_bf16_256x128x64_s4") == hopper);
    desc.device = -1;  // host memory, staged to the current device
    CHECK(has(cuda_tiled_offers(&desc), "wgmma_bf16_256x128x64_s4") == hopper);
    desc.device = 0;
    desc.lda = 514;
    CHECK_FALSE(has(cuda_tiled_offers(&desc), "wgmma_bf16_128x128x64_s6"));
    // f32 only through TF32, which this process does not allow: no id offered, each refused.
    gemm_desc_init(&desc, GEMM_F32, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_T, 512, 512, 512);
    desc.device = 0;
    for (const std::string &id : cuda_tiled_offers(&desc)) CHECK_MESSAGE(id.find("wgmma") == std::string::npos, id);
    {
        const gemm_case c = wgmma_case({GEMM_F32, GEMM_F32}, GEMM_OP_T, GEMM_OP_N, wgmma_shapes[0]);
        const operands o = make_operands(c);
        const std::vector<std::string> tf32_tiles = wgmma_tiles("tf32");
        CHECK_FALSE(tf32_tiles.empty());
        for (const std::string &tile : tf32_tiles) {
            run_result r = run_forced("wgmma_tf32" + tile, c, o, 0);
            CHECK_MESSAGE(r.status == GEMM_STATUS_NOT_SUPPORTED, tile << ": " << r.error);
            if (hopper) CHECK_MESSAGE(r.error.find("GEMM_ALLOW_TF32=1") != std::string::npos, r.error);
            CHECK(r.c == o.c0);
        }
    }
    int64_t checked = 0, refused = 0, expected_runs = 0;
    for (type_pair t : {type_pair{GEMM_BF16, GEMM_BF16}, type_pair{GEMM_BF16, GEMM_F32}, type_pair{GEMM_F16, GEMM_F16},
                        type_pair{GEMM_F16, GEMM_F32}}) {
        const std::string type = t.ab == GEMM_F16 ? "f16" : "bf16";
        const std::vector<std::string> tiles = wgmma_tiles(type);
        const int64_t narrow = std::count_if(tiles.begin(), tiles.end(), narrow_tile);
        CHECK_MESSAGE(int64_t(tiles.size()) > narrow, type);
        // Per op pair, each shape once and the batch of 3 on host memory too; the narrow tiles on
        // the two op pairs with op(B) = N.
        expected_runs += (int64_t(std::size(wgmma_shapes)) + 1) * (4 * (int64_t(tiles.size()) - narrow) + 2 * narrow);
        for (const wgmma_shape &sh : wgmma_shapes)
            for (gemm_op_t ta : {GEMM_OP_N, GEMM_OP_T})
                for (gemm_op_t tb : {GEMM_OP_N, GEMM_OP_T}) {
                    const gemm_case c = wgmma_case(t, ta, tb, sh);
                    operands o = make_operands(c);
                    if (!hopper) {
                        for (const std::string &tile : tiles) {
                            run_result r = run_forced("wgmma_" + type + tile, c, o, 0);
                            CHECK_MESSAGE(r.status == GEMM_STATUS_NOT_SUPPORTED, c.describe() << ": " << r.error);
                            CHECK(r.c == o.c0);
                            ++refused;
                        }
                        continue;
                    }
                    checked += check_wgmma_ids("wgmma_" + type, tiles, c, o, sh.batch == 3, refused);
                }
        refused += check_wgmma_misaligned("wgmma_" + type, tiles, t, hopper);
    }
    MESSAGE(checked << " wgmma runs checked, " << refused << " refusals"
                    << std::string(hopper ? "" : " (not a 9.0 device)"));
    CHECK(checked + refused > 0);
    if (hopper) CHECK(checked == expected_runs);
}

namespace {

// c through the cuda_tiled id on device memory with its scaling (device pointers): C checked
// against cpu_ref's, amax against the reference's, no CUDA error left.
void check_fp8_id(const std::string &id, const gemm_case &c, const operands &o, const std::vector<double> &expected,
                  const reference &exact) {
    const std::string where = id + " " + c.describe();
    auto as_bytes = [](const void *p, std::size_t n) {
        const unsigned char *q = static_cast<const unsigned char *>(p);
        return bytes(q, q + n);
    };
    const float amax_init = -1;
    buffer a(memory::device, o.a), b(memory::device, o.b), cbuf(memory::device, o.c0);
    buffer sa(memory::device, as_bytes(o.a_scale.data(), o.a_scale.size() * sizeof(float)));
    buffer sb(memory::device, as_bytes(o.b_scale.data(), o.b_scale.size() * sizeof(float)));
    buffer sd(memory::device, as_bytes(&o.d_scale, sizeof(float)));
    buffer amax(memory::device, as_bytes(&amax_init, sizeof(float)));
    gemm_scaling_t scaling;
    const gemm_scaling_t *sp =
        scaling_of(c, scaling, static_cast<const float *>(sa.get()), static_cast<const float *>(sb.get()),
                   static_cast<const float *>(sd.get()), static_cast<float *>(amax.get()));
    selection_guard sel("cuda_tiled:" + id);
    const gemm_status_t st = call_gemm(c, a.get(), b.get(), cbuf.get(), 0, sp);
    const std::string error = gemm_last_error();
    CUDA_REQUIRE(cudaDeviceSynchronize());
    check_no_cuda_error(where);
    REQUIRE_MESSAGE(st == GEMM_STATUS_SUCCESS, where << ": " << error);
    const std::string wrong = fp8_kernel_mismatch(c, o, cbuf.read(), expected, exact);
    CHECK_MESSAGE(wrong.empty(), where << ": " << wrong);
    if (!c.amax) return;
    float got = 0;
    const bytes raw = amax.read();
    std::memcpy(&got, raw.data(), sizeof got);
    const std::string wrong_amax = fp8_kernel_amax_mismatch(c, o, got, exact);
    CHECK_MESSAGE(wrong_amax.empty(), where << ": " << wrong_amax);
}

}  // namespace

// cuda_tiled's FP8 kernels (wgmma_e4m3_*, wgmma_e5m2_*: every id of the build) against cpu_ref
// on device memory: the TN form in both layouts (row-major N x T is the canonical T x N), ragged
// m, n, k (k not a multiple of the 128 of a stage, primes), more tiles than SMs, values over the
// types' whole range (their largest, 448 or 57344, and smallest subnormals) into bf16 and f32,
// [-1, 1] into f16, without scales, per-tensor scales, block scales (leading dimensions the
// least or padded), with an output scale and amax, beta 0 with C holding NaN and beta != 0, C's
// leading dimension odd or padded; what they refuse (other op pairs, host memory, A or B not
// 16-byte aligned), C unchanged; the tuner's candidates.
// gemm_measure of FP8 descs on device memory in each scale mode: the engine makes the scales
// in device memory and its check applies them. cuda_tiled's wgmma kernels (compute capability
// 9.0) serve every mode; cublaslt serves none and per-tensor scales and refuses block scales
// with the reason.
TEST_CASE("gpu: gemm_measure of FP8 descs on device memory, each scale mode") {
    const bool tiled = has_backend("cuda_tiled") && device_0_is_sm90(), lt = has_backend("cublaslt");
    if (!tiled && !lt) {
        MESSAGE("neither cuda_tiled on compute capability 9.0 nor cublaslt here: not tested");
        return;
    }
    std::vector<const char *> names;
    if (tiled) names.push_back("cuda_tiled");
    if (lt) names.push_back("cublaslt");
    for (gemm_scale_mode_t mode : {GEMM_SCALE_NONE, GEMM_SCALE_TENSOR, GEMM_SCALE_BLOCK})
        for (int64_t m : {int64_t(200), int64_t(1030)}) {  // every element checked; C·t
            gemm_desc_t d;
            gemm_desc_init(&d, GEMM_F8_E4M3, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_T, m, 384, 640);
            d.c_type = GEMM_BF16;
            d.device = 0;
            d.scale_mode = mode;
            gemm_measure_options_t o;
            gemm_measure_options_init(&o);
            o.budget_ms = 20;
            std::vector<gemm_measurement_t> r(names.size());
            REQUIRE_MESSAGE(gemm_measure(&d, names.data(), int64_t(names.size()), &o, r.data()) == GEMM_STATUS_SUCCESS,
                            gemm_last_error());
            for (const gemm_measurement_t &x : r) {
                INFO(std::string(x.backend) << " scale_mode " << int(mode) << " m " << m << ": " << std::string(x.error)
                                            << " " << std::string(x.note));
                if (std::string(x.backend) == "cublaslt" && mode == GEMM_SCALE_BLOCK) {
                    CHECK(x.status == GEMM_STATUS_NOT_SUPPORTED);
                    CHECK(std::string(x.error).find("block scaling") != std::string::npos);
                    continue;
                }
                CHECK(x.status == GEMM_STATUS_SUCCESS);
                CHECK(x.correct == 1);
                CHECK(std::string(x.check_method) == (m == 200 ? "reference" : "vector"));
                CHECK(x.timed == 1);
            }
        }
}

TEST_CASE("gpu: cuda_tiled FP8 kernels against cpu_ref, and what they refuse") {
    if (!has_backend("cuda_tiled")) {
        MESSAGE("cuda_tiled not available or not selected: not tested");
        return;
    }
    const std::vector<std::string> e4m3_ids = ids_with_prefix("wgmma_e4m3_"), e5m2_ids = ids_with_prefix("wgmma_e5m2_");
    if (e4m3_ids.empty()) {
        MESSAGE("this build has no wgmma kernel (CUDA before 12.0): not tested");
        return;
    }
    CHECK(e4m3_ids.size() == e5m2_ids.size());
    const bool hopper = device_0_is_sm90();
    gemm_desc_t d;
    gemm_desc_init(&d, GEMM_F8_E4M3, GEMM_COL_MAJOR, GEMM_OP_T, GEMM_OP_N, 512, 512, 512);
    d.c_type = GEMM_BF16;
    d.device = 0;
    d.scale_mode = GEMM_SCALE_TENSOR;
    CHECK((gemm_backend_supports("cuda_tiled", &d) == GEMM_STATUS_SUCCESS) == hopper);
    // Tuner candidates where they compute the problem (gemm_backend_variants refuses it elsewhere).
    if (hopper)
        for (const std::string &id : e4m3_ids) CHECK_MESSAGE(has(cuda_tiled_offers(&d), id), id);
    d.transa = GEMM_OP_N;
    CHECK(gemm_backend_supports("cuda_tiled", &d) == GEMM_STATUS_NOT_SUPPORTED);
    if (hopper) CHECK(std::string(gemm_last_error()).find("TN form") != std::string::npos);
    d.transa = GEMM_OP_T;
    d.scale_mode = GEMM_SCALE_BLOCK;
    CHECK((gemm_backend_supports("cuda_tiled", &d) == GEMM_STATUS_SUCCESS) == hopper);
    d.scale_mode = GEMM_SCALE_TENSOR;
    d.device = -1;
    CHECK(gemm_backend_supports("cuda_tiled", &d) == GEMM_STATUS_NOT_SUPPORTED);
    CHECK(std::string(gemm_last_error()).find("host memory") != std::string::npos);

    struct size3 {
        int64_t m, n, k;
        bool odd_c;  // C's leading dimension m + 3, else m rounded up to 8, plus 8
    };
    const size3 sizes[] = {{128, 128, 128, false},     // one whole tile, one stage
                           {131, 67, 257, true},       // ragged every way, k past two stages
                           {1, 1, 1, true},            // one element
                           {64, 48, 96, false},        // k below a stage
                           {67, 257, 4099, true},      // 33 stages (past the ring), a ragged last one
                           {1700, 1200, 136, false}};  // more tiles than SMs (140 of 128x128, 133 of 256x64)
    struct scaling_config {
        gemm_scale_mode_t mode;
        bool d_scale_amax;  // an output scale and amax
        int64_t ld_extra;   // block scales' leading dimensions this much past the least
    };
    const scaling_config scalings[] = {{GEMM_SCALE_NONE, false, 0},
                                       {GEMM_SCALE_TENSOR, true, 0},
                                       {GEMM_SCALE_BLOCK, false, 3},
                                       {GEMM_SCALE_BLOCK, true, 0}};
    auto round16 = [](int64_t v) { return (v + 15) / 16 * 16; };
    int64_t checked = 0, refused = 0, turn = 0, expected_runs = 0;
    for (gemm_dtype_t ab : {GEMM_F8_E4M3, GEMM_F8_E5M2})
        for (gemm_dtype_t ct : {GEMM_BF16, GEMM_F16, GEMM_F32})
            for (const size3 &s : sizes) {
                // Over the six type pairs every (layout, scaling, beta) meets some shape, and each
                // shape both layouts, every scaling and both betas.
                const int64_t shape = turn % int64_t(std::size(sizes)), pair = turn / int64_t(std::size(sizes)),
                              t = shape + pair;
                ++turn;
                const gemm_layout_t layout = t % 2 ? GEMM_ROW_MAJOR : GEMM_COL_MAJOR;
                const scaling_config &x = scalings[(shape / 2 + pair) % 4];
                const double beta = (shape / 3 + pair) % 2 ? 0.5 : 0.0, alpha = t % 5 == 1 ? -0.75 : 1.0;
                gemm_case c = fp8_tn_case(ab, ct, layout, s.m, s.n, s.k, alpha, beta);
                c.lda = round16(c.a().min_ld()) + (t % 3 == 0 ? 16 : 0);
                c.ldb = round16(c.b().min_ld());
                c.ldc = s.odd_c ? c.c().min_ld() + 3 : (c.c().min_ld() + 7) / 8 * 8 + 8;
                // f16 holds at most 65504: with scales of up to 16 on each operand (and D), the
                // longest k's sums could pass it, and an Inf is no test of the kernel.
                if (ct == GEMM_F16 && s.k > 1024 && x.mode != GEMM_SCALE_NONE) continue;
                expected_runs += int64_t(e4m3_ids.size());
                c.scaling_mode = x.mode;
                c.d_scale = c.amax = x.d_scale_amax;
                if (x.ld_extra) {
                    c.ld_a_scale = std::max<int64_t>(1, s.m) + x.ld_extra;
                    c.ld_b_scale = std::max<int64_t>(1, (s.k + 127) / 128) + x.ld_extra;
                }
                INFO(c.describe());
                const operands o = make_operands(c);
                const std::vector<double> expected = cpu_ref_result(c, o);
                const reference exact = compute_reference(c, o);
                for (const std::string &id : ab == GEMM_F8_E4M3 ? e4m3_ids : e5m2_ids) {
                    if (!hopper) {
                        const run_result r = run_forced(id, c, o, 0);
                        CHECK_MESSAGE(r.status == GEMM_STATUS_NOT_SUPPORTED,
                                      id << " " << c.describe() << ": " << r.error);
                        CHECK(r.c == o.c0);
                        ++refused;
                        continue;
                    }
                    check_fp8_id(id, c, o, expected, exact);
                    ++checked;
                }
            }
    // Other op pairs, refused by every id with the form it serves named, C unchanged; A or B
    // not 16-byte aligned (check_wgmma_misaligned).
    for (const std::string &type : {std::string("e4m3"), std::string("e5m2")}) {
        const gemm_dtype_t ab = type == "e4m3" ? GEMM_F8_E4M3 : GEMM_F8_E5M2;
        for (auto [ta, tb] :
             {std::pair{GEMM_OP_N, GEMM_OP_N}, std::pair{GEMM_OP_T, GEMM_OP_T}, std::pair{GEMM_OP_N, GEMM_OP_T}}) {
            gemm_case c = make_case(ab, GEMM_BF16, entry::ex, GEMM_COL_MAJOR, ta, tb, 64, 64, 64, 0, 1.0, 0.0);
            const operands o = make_operands(c);
            for (const std::string &id : ids_with_prefix("wgmma_" + type + "_")) {
                const run_result r = run_forced(id, c, o, 0);
                CHECK_MESSAGE(r.status == GEMM_STATUS_NOT_SUPPORTED, id << " " << c.describe() << ": " << r.error);
                if (hopper) CHECK_MESSAGE(r.error.find("TN form") != std::string::npos, r.error);
                CHECK(r.c == o.c0);
                check_no_cuda_error(id + " " + c.describe());
                ++refused;
            }
        }
        refused += check_wgmma_misaligned("wgmma_" + type, wgmma_tiles(type), type_pair{ab, GEMM_BF16}, hopper);
    }
    MESSAGE(checked << " FP8 kernel runs checked, " << refused << " refusals"
                    << std::string(hopper ? "" : " (not a 9.0 device)"));
    CHECK(checked + refused > 0);
    if (hopper) CHECK(checked == expected_runs);
}

// cuda_tiled's FP8 skinny kernels (skinny_e4m3_*, skinny_e5m2_*: every id of the build) against
// cpu_ref on device memory: the TN form in both layouts, C of 1 to 32 columns as stored and of
// few rows through its mirror, m not a multiple of a tile's 16 rows, k below one lane's 16-byte
// load, not a multiple of a chunk's 64 and with fewer whole chunks than warps, values over the
// types' whole range into bf16 and f32 and [-1, 1] into f16, no scales and per-tensor scales
// with an output scale and amax, beta 0 with NaN in C and beta != 0, alpha != 1, C's leading
// dimension past its least; each id refusing C wider than its own where its mirror does not
// compute it, other op pairs, block scales and A not 16-byte aligned, C unchanged.
TEST_CASE("gpu: cuda_tiled FP8 skinny kernels against cpu_ref, and what they refuse") {
    if (!has_backend("cuda_tiled")) {
        MESSAGE("cuda_tiled not available or not selected: not tested");
        return;
    }
    const std::vector<std::string> e4m3_ids = ids_with_prefix("skinny_e4m3_"),
                                   e5m2_ids = ids_with_prefix("skinny_e5m2_");
    if (e4m3_ids.empty()) {
        MESSAGE("this build has no skinny kernel (CUDA before 12.0): not tested");
        return;
    }
    CHECK(e4m3_ids.size() == e5m2_ids.size());
    const bool hopper = device_0_is_sm90();
    // Tuner candidates for decode shapes (row-major X W^T of 8 rows), not for block scales.
    gemm_desc_t d;
    gemm_desc_init(&d, GEMM_F8_E4M3, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_T, 8, 4096, 4096);
    d.c_type = GEMM_BF16;
    d.device = 0;
    d.scale_mode = GEMM_SCALE_TENSOR;
    CHECK(has(cuda_tiled_offers(&d), "skinny_e4m3_16x8") == hopper);
    d.scale_mode = GEMM_SCALE_BLOCK;
    CHECK_FALSE(has(cuda_tiled_offers(&d), "skinny_e4m3_16x8"));
    // The columns of C an id takes: skinny_e4m3_16x8 takes 8.
    auto columns_of = [](const std::string &id) { return std::stoll(id.substr(id.rfind('x') + 1)); };

    struct size3 {
        int64_t m, n, k;
    };
    const size3 sizes[] = {{300, 1, 4096},   // one column, whole chunks only
                           {67, 7, 100},     // ragged tiles, a part chunk, fewer chunks than warps
                           {1000, 8, 1111},  // k past a multiple of 64 by 23
                           {130, 16, 8},     // k below one lane's load
                           {45, 31, 520},    // a part of the last 8 columns
                           {33, 32, 4099},   // 32 columns, a ragged last chunk
                           {5, 300, 520},    // few rows of C: the mirror
                           {1, 1, 1}};       // one element
    auto round16 = [](int64_t v) { return (v + 15) / 16 * 16; };
    int64_t checked = 0, refused = 0, turn = 0;
    for (gemm_dtype_t ab : {GEMM_F8_E4M3, GEMM_F8_E5M2})
        for (gemm_dtype_t ct : {GEMM_BF16, GEMM_F16, GEMM_F32})
            for (const size3 &s : sizes) {
                const int64_t t = turn++;
                const gemm_layout_t layout = t % 2 ? GEMM_ROW_MAJOR : GEMM_COL_MAJOR;
                const bool scaled = t % 3 != 0;
                const double beta = t % 4 < 2 ? 0.0 : 0.5, alpha = t % 5 == 1 ? -0.75 : 1.0;
                gemm_case c = fp8_tn_case(ab, ct, layout, s.m, s.n, s.k, alpha, beta);
                c.lda = round16(c.a().min_ld()) + (t % 3 == 1 ? 16 : 0);
                c.ldb = round16(c.b().min_ld());
                c.ldc = c.c().min_ld() + 3;
                // f16 holds at most 65504: the scaled long sums could pass it (an Inf tests nothing).
                if (ct == GEMM_F16 && s.k > 1024 && scaled) continue;
                c.scaling_mode = scaled ? GEMM_SCALE_TENSOR : GEMM_SCALE_NONE;
                c.d_scale = c.amax = scaled;
                INFO(c.describe());
                const operands o = make_operands(c);
                const std::vector<double> expected = cpu_ref_result(c, o);
                const reference exact = compute_reference(c, o);
                for (const std::string &id : ab == GEMM_F8_E4M3 ? e4m3_ids : e5m2_ids) {
                    // C of at most the id's columns as stored, or of at most that many rows
                    // through its mirror (the TN form is its mirror's form).
                    if (hopper && std::min(s.m, s.n) <= columns_of(id)) {
                        check_fp8_id(id, c, o, expected, exact);
                        ++checked;
                        continue;
                    }
                    if (scaled) continue;  // run_forced passes no scales: the refusal below
                    const run_result r = run_forced(id, c, o, 0);
                    CHECK_MESSAGE(r.status == GEMM_STATUS_NOT_SUPPORTED, id << " " << c.describe() << ": " << r.error);
                    if (hopper) CHECK_MESSAGE(r.error.find("C of more than") != std::string::npos, r.error);
                    CHECK(r.c == o.c0);
                    check_no_cuda_error(id + " " + c.describe());
                    ++refused;
                }
            }
    // Other op pairs, and A not 16-byte aligned (its leading dimension 16 elements and 8 more),
    // refused with the reason, C unchanged.
    for (const std::string &type : {std::string("e4m3"), std::string("e5m2")}) {
        const gemm_dtype_t ab = type == "e4m3" ? GEMM_F8_E4M3 : GEMM_F8_E5M2;
        struct form {
            gemm_op_t ta, tb;
            int64_t lda_extra;
            const char *reason;
        };
        for (const form &f :
             {form{GEMM_OP_N, GEMM_OP_N, 0, "TN form"}, form{GEMM_OP_T, GEMM_OP_T, 0, "TN form"},
              form{GEMM_OP_N, GEMM_OP_T, 0, "TN form"}, form{GEMM_OP_T, GEMM_OP_N, 8, "16-byte aligned"}}) {
            gemm_case c = make_case(ab, GEMM_BF16, entry::ex, GEMM_COL_MAJOR, f.ta, f.tb, 64, 8, 64, 0, 1.0, 0.0);
            c.lda = c.a().min_ld() + f.lda_extra;
            const operands o = make_operands(c);
            for (const std::string &id : ids_with_prefix("skinny_" + type + "_")) {
                const run_result r = run_forced(id, c, o, 0);
                CHECK_MESSAGE(r.status == GEMM_STATUS_NOT_SUPPORTED, id << " " << c.describe() << ": " << r.error);
                if (hopper) CHECK_MESSAGE(r.error.find(f.reason) != std::string::npos, r.error);
                CHECK(r.c == o.c0);
                check_no_cuda_error(id + " " + c.describe());
                ++refused;
            }
        }
    }
    MESSAGE(checked << " FP8 skinny kernel runs checked, " << refused << " refusals"
                    << std::string(hopper ? "" : " (not a 9.0 device)"));
    CHECK(refused > 0);
    if (hopper) CHECK(checked > 0);
}

namespace {

struct skinny_shape {
    int64_t m, n, k, batch;  // column-major C is m x n (n <= 32 columns)
    double alpha, beta;
};

// The skinny kernels' case of sh: column-major op(A) = T, op(B) = N; row-major (C of sh.n rows,
// X W^T) op(A) = N, op(B) = T; or, for the _nn kernels (along_m), op(A) = op(B) = N in either
// layout (row-major X W). x_along_n: the narrow operand X stored along its short side instead
// (column-major op(B) = T, row-major op(A) = T). Operands stored along k with leading dimensions
// multiples of 8 elements (A's padded by 8 more where m is odd), along m with m rounded up to 8
// and 8 more where k is odd, X along n with n rounded up to 8 and 8 more; C's leading dimension
// m + 3; a batch strided with gaps, or with the weights shared (stride 0).
gemm_case skinny_case(type_pair t, gemm_layout_t layout, const skinny_shape &sh, bool shared_weights, bool along_m,
                      bool x_along_n) {
    auto round8 = [](int64_t v) { return (v + 7) / 8 * 8; };
    const bool col = layout == GEMM_COL_MAJOR;
    const gemm_op_t weights_op = along_m ? GEMM_OP_N : GEMM_OP_T, x_op = x_along_n ? GEMM_OP_T : GEMM_OP_N;
    gemm_case c = col ? base_case(t, layout, weights_op, x_op, sh.m, sh.n, sh.k)
                      : base_case(t, layout, x_op, weights_op, sh.n, sh.m, sh.k);
    c.alpha = sh.alpha;
    c.beta = sh.beta;
    const int64_t weights_ld = along_m ? round8(sh.m) + (sh.k % 2 ? 8 : 0) : round8(sh.k) + (sh.m % 2 ? 8 : 0);
    (col ? c.lda : c.ldb) = weights_ld;
    (col ? c.ldb : c.lda) = x_along_n ? round8(sh.n) + 8 : round8(sh.k);
    c.ldc = sh.m + 3;
    if (sh.batch > 1) {
        c.strided_entry = true;
        c.batch = sh.batch;
        c.stride_a = round8(c.a().footprint()) + 8;
        c.stride_b = round8(c.b().footprint()) + 16;
        c.stride_c = c.c().footprint() + 5;
        if (shared_weights) (col ? c.stride_a : c.stride_b) = 0;
    }
    return c;
}

}  // namespace

// The kernels for C of at most 8, 16 and 32 columns by id, where the device and the build have
// them, each on its operand form (op(A) along k; _nn: op(A) along m) with op(B) along k and along
// n (X stored along its short side: column-major op(B) = T): every n from 1 to 8 and n
// of 9, 16, 17, 25, 31 and 32 (a part of the last 8 columns, and each id refusing C wider than
// its own unless its mirror computes it: few rows, skinny kernels on C of few rows), m not a multiple of their 16 to 64
// rows (and below one lane's run of rows), k below one 8-element load, not a multiple of the 32 k of a chunk (the last
// chunk read element by element) and with fewer whole chunks than warps, strided batches (the weights shared, too),
// alpha and beta (beta = 0 with NaN in C), C's leading dimension m + 3, C in the input type and in f32, both layouts,
// device and host memory; and what they refuse (more columns than theirs, the other operand form, A or B not 16-byte
// aligned, the weights not 16-byte aligned where X lies along n), C unchanged.
TEST_CASE("gpu: cuda_tiled skinny kernels against cpu_ref, and what they refuse") {
    if (!has_backend("cuda_tiled")) {
        MESSAGE("cuda_tiled not available or not selected: not tested");
        return;
    }
    if (!has(cuda_tiled_offers(nullptr), "skinny_bf16_16x8")) {
        MESSAGE("this build has no skinny kernel (CUDA before 12.0): not tested");
        return;
    }
    const bool hopper = device_0_is_sm90();
    gemm_desc_t desc;
    gemm_desc_init(&desc, GEMM_BF16, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_T, 8, 4096, 4096);
    desc.device = 0;
    CHECK(has(cuda_tiled_offers(&desc), "skinny_bf16_16x8") == hopper);
    CHECK(has(cuda_tiled_offers(&desc), "skinny_bf16_32x8") == hopper);
    desc.m = 9;
    CHECK_FALSE(has(cuda_tiled_offers(&desc), "skinny_bf16_16x8"));
    CHECK(has(cuda_tiled_offers(&desc), "skinny_bf16_16x16") == hopper);
    desc.m = 32;
    CHECK_FALSE(has(cuda_tiled_offers(&desc), "skinny_bf16_16x16"));
    CHECK(has(cuda_tiled_offers(&desc), "skinny_bf16_16x32") == hopper);
    desc.m = 33;
    CHECK_FALSE(has(cuda_tiled_offers(&desc), "skinny_bf16_16x32"));
    CHECK_FALSE(has(cuda_tiled_offers(&desc), "skinny_bf16_64x8_nn"));
    desc.transb = GEMM_OP_N;
    desc.m = 8;
    CHECK(has(cuda_tiled_offers(&desc), "skinny_bf16_64x8_nn") == hopper);
    CHECK_FALSE(has(cuda_tiled_offers(&desc), "skinny_bf16_16x8"));
    const skinny_shape shapes[] = {{1, 1, 1, 1, 2.0, 0.0},           // one element
                                   {17, 1, 7, 1, 1.0, 0.0},          // k below one load
                                   {100, 3, 33, 1, -0.5, 0.5},       // one chunk and one element
                                   {333, 8, 1000, 1, 1.0, 0.0},      // 31 chunks and a part over 8 warps
                                   {4099, 5, 4104, 1, 0.75, -1.0},   // m past whole blocks, k 128 chunks + 8
                                   {64, 8, 256, 1, 1.0, 1.0},        // whole blocks and chunks
                                   {50, 2, 520, 3, 1.0, 0.5},        // strided batch
                                   {31, 7, 4120, 2, 0.5, 0.0},       // batch, the weights shared
                                   {2048, 4, 14336, 1, 1.0, 0.0},    // long k
                                   {130, 6, 24, 1, -1.0, 0.25},      // fewer than 8 k a lane at the end
                                   {77, 9, 300, 1, 1.0, 0.0},        // one column past 8
                                   {4099, 16, 4104, 1, 0.75, -1.0},  // 16 columns, m past whole blocks
                                   {130, 17, 1000, 1, -1.0, 0.25},   // one column past 16, a part chunk
                                   {31, 25, 33, 1, 2.0, 0.0},        // one chunk and one element
                                   {50, 31, 520, 3, 1.0, 0.5},       // strided batch
                                   {16, 32, 14336, 1, 1.0, 1.0},     // 32 columns, long k
                                   {3, 2, 64, 1, 1.0, 0.5},          // m below a lane's run of rows
                                   {67, 8, 97, 1, 1.0, 0.0}};        // m one run past a block of 64
    // Each skinny tile of this build (its id less "skinny_<type>") with its columns, <BM>x<BN>,
    // and whether it reads op(A) along m (_nn).
    struct skinny_id {
        std::string tile;
        int64_t columns;
        bool along_m;
    };
    std::vector<skinny_id> ids;
    for (const std::string &id : ids_with_prefix("skinny_bf16_")) {
        const std::string tile = id.substr(std::string("skinny_bf16").size());
        ids.push_back({tile, std::stoll(tile.substr(tile.find('x') + 1)), ends_with(tile, "_nn")});
    }
    CHECK_FALSE(ids.empty());
    CHECK(std::any_of(ids.begin(), ids.end(), [](const skinny_id &i) { return i.along_m; }));
    // Per type and layout, each shape by each id wide enough for it, on host memory too the
    // batches and the 1000-k shapes; the rest refused.
    int64_t checked = 0, refused = 0, expected_runs = 0, wide_refusals = 0;
    // An id too narrow for C's columns still computes C of as few rows as its columns through
    // its mirror where that is its form too: column-major T, N (16 x 32 by _16x16) by the ids
    // without a suffix, N, T by the _nn ids (the mirror of N, T is N, T).
    auto too_wide = [](const skinny_shape &sh, const skinny_id &i, bool x_along_n) {
        return sh.n > i.columns && (i.along_m != x_along_n || sh.m > i.columns);
    };
    for (const skinny_shape &sh : shapes)
        for (const skinny_id &i : ids)
            for (bool x_along_n : {false, true}) {
                if (too_wide(sh, i, x_along_n)) ++wide_refusals;
                else expected_runs += sh.batch == 1 && sh.k != 1000 ? 1 : 2;
            }
    for (type_pair t : {type_pair{GEMM_BF16, GEMM_BF16}, type_pair{GEMM_BF16, GEMM_F32}, type_pair{GEMM_F16, GEMM_F16},
                        type_pair{GEMM_F16, GEMM_F32}}) {
        const std::string prefix = std::string("skinny_") + (t.ab == GEMM_F16 ? "f16" : "bf16");
        for (const skinny_shape &sh : shapes)
            for (gemm_layout_t layout : {GEMM_COL_MAJOR, GEMM_ROW_MAJOR})
                for (auto [along_m, x_along_n] :
                     {std::pair{false, false}, std::pair{true, false}, std::pair{false, true}, std::pair{true, true}}) {
                    const gemm_case c = skinny_case(t, layout, sh, &sh == &shapes[7], along_m, x_along_n);
                    const operands o = make_operands(c);
                    const std::vector<double> expected = hopper ? cpu_ref_result(c, o) : std::vector<double>{};
                    for (const skinny_id &i : ids) {
                        if (i.along_m != along_m) continue;
                        const std::string id = prefix + i.tile;
                        if (!hopper || too_wide(sh, i, x_along_n)) {
                            const run_result r = run_forced(id, c, o, 0);
                            CHECK_MESSAGE(r.status == GEMM_STATUS_NOT_SUPPORTED,
                                          id << " " << c.describe() << ": " << r.error);
                            if (hopper)
                                CHECK_MESSAGE(r.error.find("more than " + std::to_string(i.columns) + " columns") !=
                                                  std::string::npos,
                                              id << ": " << r.error);
                            CHECK(r.c == o.c0);
                            ++refused;
                            continue;
                        }
                        check_variant_run(id + " " + c.describe(), c, o, run_forced(id, c, o, 0), expected);
                        ++checked;
                        if (sh.batch == 1 && sh.k != 1000) continue;
                        selection_guard sel("cuda_tiled:" + id);
                        check_variant_run(id + " host " + c.describe(), c, o, run_in(memory::host, c, o, nullptr),
                                          expected);
                        ++checked;
                    }
                }
        // What they all refuse: 33 columns, the other operand form (column-major N, T, the weights
        // along m either way, for the kernels that read them along k; T, N for the _nn ones), B's
        // leading dimension (X along k) or every base not 16-byte aligned, and with X along n
        // (op(B) = T, which asks no alignment of X) A's leading dimension.
        for (const skinny_id &i : ids) {
            const gemm_op_t own = i.along_m ? GEMM_OP_N : GEMM_OP_T, other = i.along_m ? GEMM_OP_T : GEMM_OP_N;
            gemm_case wide = base_case(t, GEMM_COL_MAJOR, own, GEMM_OP_N, 64, 33, 64);
            wide.lda = wide.ldb = wide.ldc = 64;
            gemm_case other_form = wide, odd_ld = wide, narrow = wide, odd_weights = wide;
            other_form.n = odd_ld.n = narrow.n = odd_weights.n = 8;
            other_form.transa = other;
            if (!i.along_m) other_form.transb = GEMM_OP_T;
            odd_ld.ldb = 66;
            odd_weights.transb = GEMM_OP_T;
            odd_weights.lda = 66;
            odd_weights.ldb = 9;  // X along n: any leading dimension
            const std::pair<gemm_case, int> refusals[] = {
                {wide, 0}, {other_form, 0}, {odd_ld, 0}, {narrow, 1}, {odd_weights, 0}};
            const std::string reasons[] = {"more than " + std::to_string(i.columns) + " columns",
                                           i.along_m ? "not stored along m" : "not stored along k", "16-byte aligned",
                                           "16-byte aligned",
                                           "the weights (the operand beside C's many rows or columns)"};
            for (std::size_t r_i = 0; r_i < std::size(refusals); ++r_i) {
                const auto &[x, offset] = refusals[r_i];
                const std::string id = prefix + i.tile,
                                  where = id + " " + x.describe() + " offset " + std::to_string(offset);
                const operands o = make_operands(x);
                const run_result r = run_forced(id, x, o, offset);
                CHECK_MESSAGE(r.status == GEMM_STATUS_NOT_SUPPORTED, where << ": " << r.error);
                if (hopper) CHECK_MESSAGE(r.error.find(reasons[r_i]) != std::string::npos, where << ": " << r.error);
                CHECK_MESSAGE(r.c == o.c0, where << ": C changed");
                check_no_cuda_error(where);
                ++refused;
            }
        }
    }
    MESSAGE(checked << " skinny runs checked, " << refused << " refusals"
                    << std::string(hopper ? "" : " (not a 9.0 device)"));
    if (hopper) CHECK(checked == 4 * 2 * expected_runs);
    // Per type: the five refusals by each id, and in both layouts every case too wide for an id,
    // X along k and along n (off a 9.0 device every case).
    const int64_t all_runs = 2 * int64_t(std::size(shapes) * std::size(ids));
    CHECK(refused == 4 * (5 * int64_t(std::size(ids)) + 2 * (hopper ? wide_refusals : all_runs)));
}

namespace {

// A case of C with few rows, the mirror of the skinny kernels' form: column-major C of sh.m rows
// and sh.n columns with ops (ta, tb), or its row-major twin (C of sh.m columns: ops (tb, ta),
// sh.n x sh.m), whose canonical problem is the same. A's and B's leading dimensions the least
// rounded up to 8 elements, 8 more where the least is odd (16-byte aligned, and larger than
// needed), but the narrow operand's one more than the least where it lies along its short side
// (column-major op(A) = N) and only the mirror reads it (n past 32): read an element at a time,
// it needs no alignment; C's 3 more than needed; a batch strided with gaps, or with the weights
// (the operand of C's many columns) shared.
gemm_case mirror_case(type_pair t, gemm_layout_t layout, gemm_op_t ta, gemm_op_t tb, const skinny_shape &sh,
                      bool shared_weights) {
    auto aligned_ld = [](int64_t least) { return (least + 7) / 8 * 8 + (least % 2 ? 8 : 0); };
    const bool col = layout == GEMM_COL_MAJOR;
    gemm_case c = col ? base_case(t, layout, ta, tb, sh.m, sh.n, sh.k) : base_case(t, layout, tb, ta, sh.n, sh.m, sh.k);
    c.alpha = sh.alpha;
    c.beta = sh.beta;
    c.lda = aligned_ld(c.a().min_ld());
    c.ldb = aligned_ld(c.b().min_ld());
    if (ta == GEMM_OP_N && sh.n > 32) (col ? c.lda : c.ldb) = (col ? c.a() : c.b()).min_ld() + 1;
    c.ldc = c.c().min_ld() + 3;
    if (sh.batch > 1) {
        c.strided_entry = true;
        c.batch = sh.batch;
        c.stride_a = (c.a().footprint() + 7) / 8 * 8 + 8;
        c.stride_b = (c.b().footprint() + 7) / 8 * 8 + 16;
        c.stride_c = c.c().footprint() + 5;
        if (shared_weights) (col ? c.stride_b : c.stride_a) = 0;
    }
    return c;
}

// Whether a skinny id of `columns` columns (along_m: _nn) computes the column-major problem of
// ops (ta, tb) with C m x n: the ids without a suffix read op(A) = T with C of few columns as
// stored and op(B) = N with C of few rows mirrored; the _nn ids op(A) = N as stored and
// op(B) = T mirrored (the narrow operand along k or along its short side either way).
bool skinny_serves(bool along_m, int64_t columns, gemm_op_t ta, gemm_op_t tb, int64_t m, int64_t n) {
    const bool t_a = ta == GEMM_OP_T, t_b = tb == GEMM_OP_T;
    if (!along_m) return (t_a && n <= columns) || (!t_b && m <= columns);
    return (!t_a && n <= columns) || (t_b && m <= columns);
}

// What the refusal of such an id names: its width where it reads the op pair in some
// orientation, else the form it reads and the family that reads the pair.
std::vector<std::string> skinny_refusal_words(bool along_m, gemm_op_t ta, gemm_op_t tb) {
    const bool t_a = ta == GEMM_OP_T, t_b = tb == GEMM_OP_T;
    if (along_m)
        return !t_a || t_b ? std::vector<std::string>{"more than"}
                           : std::vector<std::string>{"not stored along m or n", "skinny kernels without _nn read"};
    return t_a || !t_b ? std::vector<std::string>{"more than"}
                       : std::vector<std::string>{"not stored along k", "the _nn skinny kernels read"};
}

}  // namespace

// The skinny kernels on their mirrors, C of few rows (column-major m of 1, 7, 8, 9, 16, 31 and
// 32; the row-major twins C of as many columns), computed as C^T = op(B)^T op(A)^T with C^T
// stored row-major: n past whole blocks and of 33 (no id reads it as stored), n and m both few,
// k below one load, not a multiple of a chunk, long; strided batches (the weights shared too),
// alpha and beta (beta = 0 with NaN in C), C's leading dimension 3 more than needed, C in the
// input type and in f32, every op pair in both layouts, device memory and, for the batches, host
// memory. The ids without a suffix compute column-major (T, N) and (N, N), the _nn ids (T, T) and
// (N, T), where C's rows fit their columns (op(A) = N: the narrow operand along its short side,
// its leading dimension not 16-byte aligned where only the mirror reads it); the others refuse
// with the reason (the other family), C unchanged. Every id that computes such a shape is among
// the tuner's candidates for it (gemm_backend_variants lists what the tuner times), as stored with
// the narrow operand along n too.
TEST_CASE("gpu: cuda_tiled skinny kernels on C of few rows (their mirrors) against cpu_ref, and what they refuse") {
    if (!has_backend("cuda_tiled")) {
        MESSAGE("cuda_tiled not available or not selected: not tested");
        return;
    }
    if (!has(cuda_tiled_offers(nullptr), "skinny_bf16_16x8")) {
        MESSAGE("this build has no skinny kernel (CUDA before 12.0): not tested");
        return;
    }
    const bool hopper = device_0_is_sm90();
    // The tuner's candidates: for C of 8 rows the ids without a suffix (column-major T, N and
    // N, N; row-major N, T and N, N with C of 8 columns) and the _nn ids (T, T and N, T; row-major
    // T, T and T, N); 9 rows leave out the ids of 8 columns, 33 rows every skinny id; for C of 8
    // columns with op(B) = T (the narrow operand along n) the ids without a suffix on T, T and
    // the _nn ids on N, T.
    struct offer {
        gemm_layout_t layout;
        gemm_op_t ta, tb;
        int64_t m, n;
        const char *id;
        bool offered;
    };
    const offer offers[] = {{GEMM_COL_MAJOR, GEMM_OP_T, GEMM_OP_N, 8, 4096, "skinny_bf16_16x8", true},
                            {GEMM_COL_MAJOR, GEMM_OP_T, GEMM_OP_N, 8, 4096, "skinny_bf16_32x8", true},
                            {GEMM_COL_MAJOR, GEMM_OP_T, GEMM_OP_N, 8, 4096, "skinny_bf16_16x32", true},
                            {GEMM_COL_MAJOR, GEMM_OP_T, GEMM_OP_N, 8, 4096, "skinny_bf16_32x8_nn", false},
                            {GEMM_COL_MAJOR, GEMM_OP_T, GEMM_OP_T, 8, 4096, "skinny_bf16_32x8_nn", true},
                            {GEMM_COL_MAJOR, GEMM_OP_T, GEMM_OP_T, 8, 4096, "skinny_bf16_64x32_nn", true},
                            {GEMM_COL_MAJOR, GEMM_OP_T, GEMM_OP_T, 8, 4096, "skinny_bf16_16x8", false},
                            {GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 8, 4096, "skinny_bf16_32x8_nn", false},
                            {GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 8, 4096, "skinny_bf16_16x8", true},
                            {GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 8, 4096, "skinny_bf16_16x32", true},
                            {GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_T, 8, 4096, "skinny_bf16_16x8", false},
                            {GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_T, 8, 4096, "skinny_bf16_32x8_nn", true},
                            {GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_T, 9, 4096, "skinny_bf16_64x8_nn", false},
                            {GEMM_COL_MAJOR, GEMM_OP_T, GEMM_OP_T, 4096, 8, "skinny_bf16_16x8", true},
                            {GEMM_COL_MAJOR, GEMM_OP_T, GEMM_OP_T, 4096, 8, "skinny_bf16_32x8_nn", false},
                            {GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_T, 4096, 8, "skinny_bf16_64x8_nn", true},
                            {GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_T, 4096, 8, "skinny_bf16_16x8", false},
                            {GEMM_COL_MAJOR, GEMM_OP_T, GEMM_OP_N, 9, 4096, "skinny_bf16_16x8", false},
                            {GEMM_COL_MAJOR, GEMM_OP_T, GEMM_OP_N, 9, 4096, "skinny_bf16_16x16", true},
                            {GEMM_COL_MAJOR, GEMM_OP_T, GEMM_OP_T, 9, 4096, "skinny_bf16_32x16_nn", true},
                            {GEMM_COL_MAJOR, GEMM_OP_T, GEMM_OP_N, 33, 4096, "skinny_bf16_16x32", false},
                            {GEMM_COL_MAJOR, GEMM_OP_T, GEMM_OP_T, 33, 4096, "skinny_bf16_32x32_nn", false},
                            {GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_T, 4096, 8, "skinny_bf16_16x8", true},
                            {GEMM_ROW_MAJOR, GEMM_OP_T, GEMM_OP_T, 4096, 8, "skinny_bf16_32x8_nn", true},
                            {GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_N, 4096, 8, "skinny_bf16_32x8_nn", false},
                            {GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_N, 4096, 8, "skinny_bf16_16x8", true},
                            {GEMM_ROW_MAJOR, GEMM_OP_T, GEMM_OP_N, 4096, 8, "skinny_bf16_16x8", false},
                            {GEMM_ROW_MAJOR, GEMM_OP_T, GEMM_OP_N, 4096, 8, "skinny_bf16_32x8_nn", true}};
    for (const offer &x : offers) {
        gemm_desc_t desc;
        gemm_desc_init(&desc, GEMM_BF16, x.layout, x.ta, x.tb, x.m, x.n, 4096);
        desc.device = 0;
        CHECK_MESSAGE(has(cuda_tiled_offers(&desc), x.id) == (x.offered && hopper),
                      x.id << " " << layout_name(x.layout) << " " << op_letter(x.ta) << op_letter(x.tb) << " m=" << x.m
                           << " n=" << x.n);
    }
    const skinny_shape shapes[] = {{1, 1031, 97, 1, 1.0, 0.0},      // one row, 3 chunks and a part
                                   {7, 257, 1000, 1, 0.5, -1.0},    // 31 chunks and a part over 8 warps
                                   {8, 4099, 33, 1, 1.0, 0.0},      // n past whole blocks of 64
                                   {9, 521, 520, 3, 1.0, 0.5},      // strided batch
                                   {16, 130, 4104, 1, -1.0, 0.25},  // k 128 chunks + 8
                                   {31, 67, 7, 1, 2.0, 0.0},        // k below one load
                                   {32, 2053, 300, 2, 1.0, 0.0},    // batch, the weights shared
                                   {32, 33, 64, 1, 1.0, 1.0},       // one column past any id's
                                   {5, 20, 61, 1, 1.0, 0.5}};       // few rows and few columns
    struct skinny_id {
        std::string tile;
        int64_t columns;
        bool along_m;
    };
    std::vector<skinny_id> ids;
    for (const std::string &id : ids_with_prefix("skinny_bf16_")) {
        const std::string tile = id.substr(std::string("skinny_bf16").size());
        ids.push_back({tile, std::stoll(tile.substr(tile.find('x') + 1)), ends_with(tile, "_nn")});
    }
    CHECK_FALSE(ids.empty());
    // Per type and layout: each shape and op pair by every id, the served ones also on host
    // memory for the batches.
    int64_t checked = 0, refused = 0, expected_runs = 0, expected_refusals = 0;
    for (const skinny_shape &sh : shapes)
        for (gemm_op_t ta : {GEMM_OP_N, GEMM_OP_T})
            for (gemm_op_t tb : {GEMM_OP_N, GEMM_OP_T})
                for (const skinny_id &i : ids) {
                    if (hopper && skinny_serves(i.along_m, i.columns, ta, tb, sh.m, sh.n))
                        expected_runs += sh.batch == 1 ? 1 : 2;
                    else ++expected_refusals;
                }
    for (type_pair t : {type_pair{GEMM_BF16, GEMM_BF16}, type_pair{GEMM_BF16, GEMM_F32}, type_pair{GEMM_F16, GEMM_F16},
                        type_pair{GEMM_F16, GEMM_F32}}) {
        const std::string prefix = std::string("skinny_") + (t.ab == GEMM_F16 ? "f16" : "bf16");
        for (const skinny_shape &sh : shapes)
            for (gemm_layout_t layout : {GEMM_COL_MAJOR, GEMM_ROW_MAJOR})
                for (gemm_op_t ta : {GEMM_OP_N, GEMM_OP_T})
                    for (gemm_op_t tb : {GEMM_OP_N, GEMM_OP_T}) {
                        const gemm_case c = mirror_case(t, layout, ta, tb, sh, &sh == &shapes[6]);
                        const operands o = make_operands(c);
                        const bool any = std::any_of(ids.begin(), ids.end(), [&](const skinny_id &i) {
                            return skinny_serves(i.along_m, i.columns, ta, tb, sh.m, sh.n);
                        });
                        const std::vector<double> expected =
                            hopper && any ? cpu_ref_result(c, o) : std::vector<double>{};
                        for (const skinny_id &i : ids) {
                            const std::string id = prefix + i.tile, where = id + " " + c.describe();
                            if (!hopper || !skinny_serves(i.along_m, i.columns, ta, tb, sh.m, sh.n)) {
                                const run_result r = run_forced(id, c, o, 0);
                                CHECK_MESSAGE(r.status == GEMM_STATUS_NOT_SUPPORTED, where << ": " << r.error);
                                if (hopper)
                                    for (const std::string &word : skinny_refusal_words(i.along_m, ta, tb))
                                        CHECK_MESSAGE(r.error.find(word) != std::string::npos, where << ": " << r.error);
                                CHECK_MESSAGE(r.c == o.c0, where << ": C changed");
                                check_no_cuda_error(where);
                                ++refused;
                                continue;
                            }
                            check_variant_run(where, c, o, run_forced(id, c, o, 0), expected);
                            ++checked;
                            if (sh.batch == 1) continue;
                            selection_guard sel("cuda_tiled:" + id);
                            check_variant_run(id + " host " + c.describe(), c, o, run_in(memory::host, c, o, nullptr),
                                              expected);
                            ++checked;
                        }
                    }
    }
    MESSAGE(checked << " mirrored skinny runs checked, " << refused << " refusals"
                    << std::string(hopper ? "" : " (not a 9.0 device)"));
    // Per type (4) and layout (2).
    CHECK(checked == 4 * 2 * expected_runs);
    CHECK(refused == 4 * 2 * expected_refusals);
}

// Split k's sum does not depend on the order the splits ran in: the reduction adds the
// partial sums in split order. The same bits on every run, from a replayed CUDA graph (its
// partial sums in the graph's own allocation) and from calls after the graph.
TEST_CASE("gpu: cuda_tiled split k gives the same bits on every run and in a CUDA graph") {
    if (!has_backend("cuda_tiled") || !has(cuda_tiled_offers(nullptr), "wgmma_bf16_128x128x64_s6_splitk")) {
        MESSAGE("cuda_tiled or its wgmma kernels not in this build or not selected: not tested");
        return;
    }
    if (!device_0_is_sm90()) {
        MESSAGE("device 0 is not a 9.0 device: the wgmma kernels refuse it (their refusals are tested above)");
        return;
    }
    cudaStream_t stream = nullptr;
    CUDA_REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    int64_t compared = 0;
    // The last two shapes' partial sums need more reduction blocks of one quad a thread than
    // the H200 runs at once (2 x 256 and 2 x 300 columns against 3 x 132): their reductions take
    // two quads a thread, the second with m odd (element loads) and the second quad past m for
    // most threads.
    const wgmma_shape many_columns{2048, 256, 1536, 1, 1.0, 0.5, false};
    const wgmma_shape many_ragged_columns{1541, 300, 1536, 1, -0.5, 0.25, true};
    // Every bf16 id that splits k, but the narrow ones, which refuse op(B) = T.
    std::vector<std::string> split_ids;
    for (const std::string &tile : wgmma_tiles("bf16"))
        if (ends_with(tile, "_splitk") && !narrow_tile(tile)) split_ids.push_back("wgmma_bf16" + tile);
    CHECK_FALSE(split_ids.empty());
    for (const std::string &id : split_ids)
        for (const wgmma_shape &sh :
             {wgmma_shapes[7], wgmma_shapes[8], wgmma_shapes[9], many_columns, many_ragged_columns}) {
            const gemm_case c = wgmma_case({GEMM_BF16, GEMM_F32}, GEMM_OP_N, GEMM_OP_T, sh);
            const operands o = make_operands(c);
            const std::string where = std::string(id) + " " + c.describe();
            // Before the selection: cpu_ref_result selects cpu_ref, then auto.
            const std::vector<double> expected = cpu_ref_result(c, o);
            selection_guard sel(std::string("cuda_tiled:") + id);
            buffer a(memory::device, o.a), b(memory::device, o.b), cbuf(memory::device, o.c0);
            auto reset_c = [&] { CUDA_REQUIRE(upload(cbuf.get(), o.c0.data(), o.c0.size())); };
            auto call = [&] {
                gemm_set_stream(stream);
                const gemm_status_t s = call_gemm(c, a.get(), b.get(), cbuf.get(), 0);
                gemm_set_stream(nullptr);
                return s;
            };
            auto call_to_end = [&] {
                REQUIRE_MESSAGE(call() == GEMM_STATUS_SUCCESS, where << ": " << gemm_last_error());
                CUDA_REQUIRE(cudaStreamSynchronize(stream));
            };
            call_to_end();
            const bytes first = cbuf.read();
            const comparison cmp = compare_result(c, o, first, expected);
            CHECK_MESSAGE(cmp.ok, where << ": " << cmp.first);
            // C after another run, against cpu_ref and bit for bit against the first.
            const std::size_t element = dtype_size(c.c_type);
            auto check_same = [&](const std::string &run) {
                const bytes got = cbuf.read();
                const comparison again = compare_result(c, o, got, expected);
                CHECK_MESSAGE(again.ok, where << ", " << run << ": " << again.first);
                int64_t differ = 0;
                for (std::size_t e = 0; e + element <= got.size(); e += element)
                    differ += std::memcmp(&got[e], &first[e], element) != 0;
                CHECK_MESSAGE(differ == 0,
                              where << ", " << run << ": " << differ << " elements differ from the first run's");
                ++compared;
            };
            for (int run = 2; run <= 4; ++run) {
                reset_c();
                call_to_end();
                check_same("run " + std::to_string(run));
            }
            CUDA_REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
            const gemm_status_t captured_call = call();
            const std::string error = gemm_last_error();
            cudaGraph_t graph = nullptr;
            const cudaError_t captured = cudaStreamEndCapture(stream, &graph);
            REQUIRE_MESSAGE(captured_call == GEMM_STATUS_SUCCESS, where << " inside capture: " << error);
            REQUIRE_MESSAGE(captured == cudaSuccess,
                            where << ": cudaStreamEndCapture: " << cudaGetErrorString(captured));
            cudaGraphExec_t exec = nullptr;
            CUDA_REQUIRE(cudaGraphInstantiate(&exec, graph, 0));
            for (int replay = 1; replay <= 2; ++replay) {
                reset_c();
                CUDA_REQUIRE(cudaGraphLaunch(exec, stream));
                CUDA_REQUIRE(cudaStreamSynchronize(stream));
                check_same("graph replay " + std::to_string(replay));
            }
            cudaGraphExecDestroy(exec);
            cudaGraphDestroy(graph);
            reset_c();
            call_to_end();
            check_same("the call after the graph");
            check_no_cuda_error(where);
        }
    cudaStreamDestroy(stream);
    MESSAGE(compared << " split-k results compared bit for bit");
    CHECK(compared == int64_t(std::size(split_ids)) * 5 * 6);
}

// cuda_tiled's Hopper kernels wait for the stream's previous kernel before touching memory
// (they may be launched as its programmatic dependents, and let the next call's kernels start
// early): calls chained on one stream with no wait between them, each reading the previous
// call's C and writing over what the one before it read, give what the chain gives run one
// call at a time. W is a permutation with signs (row j holds +-1 at perm[j]), so each C (bf16,
// row-major X W^T) is X's columns permuted, exact: the result is compared bit for bit. Shapes
// whose grid fills the SMs: split k with a 256x64 and a 128x128 tile, and 128x128 unsplit;
// 128x8192x8192 splits k with operands (130 MiB) that outweigh the L2 of an H100 or H200, so
// that its reductions drop the partial sums from L2 as they read them (discards_partials).
TEST_CASE("gpu: cuda_tiled calls chained on one stream without a wait give the chain's exact result") {
    if (!has_backend("cuda_tiled")) {
        MESSAGE("cuda_tiled not in this build or not selected: not tested");
        return;
    }
    cudaStream_t stream = nullptr;
    CUDA_REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    selection_guard sel("cuda_tiled");
    constexpr int calls = 6;
    struct chain_shape {
        int64_t m, k;
    };  // X m x k, W k x k, C m x k
    for (const chain_shape sh :
         {chain_shape{8, 4096}, chain_shape{128, 2048}, chain_shape{2176, 1024}, chain_shape{128, 8192}}) {
        const int64_t m = sh.m, k = sh.k;
        const std::size_t rows = std::size_t(m), columns = std::size_t(k);
        const std::string where = std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(k);
        random_source rng(uint64_t(m * 7919 + k));
        std::vector<std::size_t> perm(columns);
        for (std::size_t j = 0; j < columns; ++j) perm[j] = j;
        for (std::size_t j = columns - 1; j > 0; --j) std::swap(perm[j], perm[rng.next() % (j + 1)]);
        std::vector<uint16_t> sign(columns), x(rows * columns), w(columns * columns, 0);
        for (std::size_t j = 0; j < columns; ++j) {
            sign[j] = rng.next() % 2 ? 0x8000 : 0;
            w[j * columns + perm[j]] = uint16_t(0x3F80 | sign[j]);  // +-1
        }
        for (uint16_t &v : x) v = bf16_from_double(rng.uniform());
        buffer wbuf(memory::device, bytes_of(w));
        buffer ping(memory::device, bytes_of(x)), pong(memory::device, bytes(x.size() * sizeof(uint16_t), 0));
        // The chain on the host: C[i][j] = sign[j] * X[i][perm[j]].
        std::vector<uint16_t> expected = x, next(x.size());
        for (int call = 0; call < calls; ++call) {
            for (std::size_t i = 0; i < rows; ++i)
                for (std::size_t j = 0; j < columns; ++j)
                    next[i * columns + j] = uint16_t(expected[i * columns + perm[j]] ^ sign[j]);
            expected.swap(next);
        }
        const float alpha = 1.0f, beta = 0.0f;
        gemm_set_stream(stream);
        gemm_status_t status = GEMM_STATUS_SUCCESS;
        for (int call = 0; call < calls && status == GEMM_STATUS_SUCCESS; ++call) {
            void *in = call % 2 ? pong.get() : ping.get(), *out = call % 2 ? ping.get() : pong.get();
            status = gemm_ex(GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_T, m, k, k, &alpha, in, GEMM_BF16, k, wbuf.get(),
                             GEMM_BF16, k, &beta, out, GEMM_BF16, k, GEMM_F32);
        }
        gemm_set_stream(nullptr);
        REQUIRE_MESSAGE(status == GEMM_STATUS_SUCCESS, where << ": " << gemm_last_error());
        CUDA_REQUIRE(cudaStreamSynchronize(stream));
        const bytes got = (calls % 2 ? pong : ping).read();
        int64_t differ = 0, first = -1;
        for (std::size_t e = 0; e < expected.size(); ++e) {
            uint16_t v;
            std::memcpy(&v, &got[2 * e], sizeof v);
            if (v != expected[e] && differ++ == 0) first = int64_t(e);
        }
        CHECK_MESSAGE(differ == 0, where << ", " << calls << " calls chained: " << differ
                                         << " elements differ from the chain's, the first at " << first);
        check_no_cuda_error(where);
    }
    cudaStreamDestroy(stream);
}

// One process with GEMM_ALLOW_TF32=1 and GEMM_VERBOSE=1 (ctest gpu.tf32): the TF32 kernels on
// every shape and op pair of the wgmma matrix (an operand stored along m or n is copied along k
// first: then its base and leading dimension need no alignment), refusing misaligned operands
// they read directly with C unchanged; and cuda_tiled's default taking them where they compute
// the problem.
TEST_SUITE("gpu_tf32" * doctest::skip()) {
    TEST_CASE("gpu_tf32: cuda_tiled wgmma_tf32 kernels against cpu_ref, what they refuse, the default's choice") {
        REQUIRE(std::getenv("GEMM_ALLOW_TF32") != nullptr);
        REQUIRE(std::string(std::getenv("GEMM_ALLOW_TF32")) == "1");
        if (!has_backend("cuda_tiled") || !has(cuda_tiled_offers(nullptr), "wgmma_tf32_128x128x32_s6")) {
            MESSAGE("cuda_tiled or its wgmma kernels not in this build or not selected: not tested");
            return;
        }
        const bool hopper = device_0_is_sm90();
        const type_pair f32{GEMM_F32, GEMM_F32};
        gemm_desc_t desc;
        gemm_desc_init(&desc, GEMM_F32, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_T, 512, 512, 512);
        desc.device = 0;
        const std::vector<std::string> tf32_tiles = wgmma_tiles("tf32");
        CHECK_FALSE(tf32_tiles.empty());
        for (const std::string &tile : tf32_tiles)
            CHECK_MESSAGE(has(cuda_tiled_offers(&desc), "wgmma_tf32" + tile) == hopper, tile);
        desc.transb = GEMM_OP_N;  // B stored along n: copied
        CHECK(has(cuda_tiled_offers(&desc), "wgmma_tf32_128x128x32_s6") == hopper);
        int64_t checked = 0, refused = 0;
        for (const wgmma_shape &sh : wgmma_shapes)
            for (gemm_op_t ta : {GEMM_OP_N, GEMM_OP_T})
                for (gemm_op_t tb : {GEMM_OP_N, GEMM_OP_T}) {
                    gemm_case c = wgmma_case(f32, ta, tb, sh);
                    c.tf32 = true;
                    const operands o = make_operands(c);
                    if (!hopper) {
                        for (const std::string &tile : tf32_tiles) {
                            run_result r = run_forced("wgmma_tf32" + tile, c, o, 0);
                            CHECK_MESSAGE(r.status == GEMM_STATUS_NOT_SUPPORTED, c.describe() << ": " << r.error);
                            CHECK(r.c == o.c0);
                            ++refused;
                        }
                        continue;
                    }
                    checked += check_wgmma_ids("wgmma_tf32", tf32_tiles, c, o, sh.batch == 3, refused);
                }
        refused += check_wgmma_misaligned("wgmma_tf32", tf32_tiles, f32, hopper);
        MESSAGE(checked << " wgmma_tf32 runs checked, " << refused << " refusals");
        if (hopper) CHECK(checked == 4 * (std::size(wgmma_shapes) + 1) * std::size(tf32_tiles));
        if (!hopper) return;
        // Both operands copied (column-major NT), from odd leading dimensions and bases one
        // element off 16 bytes, which the copies do not need aligned.
        for (const wgmma_shape &sh : {wgmma_shapes[1], wgmma_shapes[5], wgmma_shapes[8]}) {
            gemm_case c = wgmma_case(f32, GEMM_OP_N, GEMM_OP_T, sh);
            c.tf32 = true;
            c.lda = sh.m + 1 + sh.m % 2;  // odd
            c.ldb = sh.n + 1 + sh.n % 2;
            if (sh.batch > 1) c.stride_a = c.a().footprint() + 1, c.stride_b = c.b().footprint() + 3;
            const operands o = make_operands(c);
            const std::vector<double> expected = cpu_ref_result(c, o);
            for (const std::string &tile : tf32_tiles) {
                const std::string id = "wgmma_tf32" + tile;
                check_variant_run(id + " offset 1 " + c.describe(), c, o, run_forced(id, c, o, 1), expected);
            }
        }
        // cuda_tiled's default: the TF32 kernel the rule names wherever it computes the problem
        // (row-major NN copies B along k), the exact f32 register-tiled kernels where it does not
        // (an operand it would read directly, its leading dimension odd); in bf16, row-major X W
        // (W stored (in, out)) of up to 32 rows of X: the skinny kernels that read W along its
        // rows, in blocks of 32, where W is at most 32 MiB (4096 x 4096; 8 more k take the tiles
        // of 16 columns); for C of at
        // most 8 columns (row-major rows of X W^T) the skinny kernel, X stored along k or along
        // its few rows, where op(A) is at most 128 MiB (14336 x 4680
        // bf16; 8 more k take the tiles of 16 columns), for C of 9 to 16 and 17 to 32 columns
        // its 16- and 32-column forms where op(A) is at most 64 MiB (4096 x 8192; 8 more k take
        // the tiles); beyond those, for C of at most 16 the tiles of 16 columns where they
        // compute it (op(A) = N: X stored along k), 128x16 where its tiles run unsplit in one
        // wave over 3/4 of the H200's 132 SMs and k is at most 8192 (112 tiles), 256x16 where k
        // is larger or the tiles make two waves (or too few), and the 256x64 tiles where neither
        // computes it; for C of 17 to 31 columns the 256x64 tiles, for 32 to 64 the 128x64
        // ones, split or not (102 tiles here, 32 above); for 128 the 64x128 tiles where the
        // 128x128 ones would cover at most half of the SMs (32 tiles), else the 128x128 ones (71
        // tiles, or C of 97 columns: their twin that splits k, fewer tiles than SMs).
        struct expectation {
            type_pair t;
            gemm_op_t ta, tb;
            int64_t m, n, k, pad;
            const char *variant;
            bool tf32;
        };
        const type_pair bf16{GEMM_BF16, GEMM_BF16};
        const expectation defaults[] = {
            {f32, GEMM_OP_N, GEMM_OP_T, 4096, 4096, 32, 0, "variant=wgmma_tf32_256x128x32_s4 ", true},
            {f32, GEMM_OP_N, GEMM_OP_T, 2048, 2048, 256, 0, "variant=wgmma_tf32_128x128x32_s6 ", true},
            {f32, GEMM_OP_N, GEMM_OP_T, 300, 260, 2000, 0, "variant=wgmma_tf32_128x128x32_s6_splitk ", true},
            {f32, GEMM_OP_N, GEMM_OP_T, 8, 40, 3000, 0, "variant=wgmma_tf32_256x64x32_s5_splitk ", true},
            {f32, GEMM_OP_N, GEMM_OP_T, 40, 13000, 256, 0, "variant=wgmma_tf32_128x64x32_s8_splitk ", true},
            {f32, GEMM_OP_N, GEMM_OP_N, 300, 260, 2000, 0, "variant=wgmma_tf32_128x128x32_s6_splitk ", true},
            {f32, GEMM_OP_N, GEMM_OP_T, 300, 260, 200, 1, "variant=tiled_f32_", false},
            {bf16, GEMM_OP_N, GEMM_OP_N, 8, 4096, 4096, 0, "variant=skinny_bf16_32x8_nn ", false},
            {bf16, GEMM_OP_N, GEMM_OP_N, 16, 4096, 4096, 0, "variant=skinny_bf16_32x16_nn ", false},
            {bf16, GEMM_OP_N, GEMM_OP_N, 32, 2048, 4096, 0, "variant=skinny_bf16_32x32_nn ", false},
            {bf16, GEMM_OP_N, GEMM_OP_N, 8, 4096, 4104, 0, "variant=wgmma_bf16_256x16x64_s6_splitk ", false},
            {bf16, GEMM_OP_N, GEMM_OP_T, 8, 4096, 3000, 0, "variant=skinny_bf16_16x8 ", false},
            {bf16, GEMM_OP_N, GEMM_OP_T, 1, 14336, 4680, 0, "variant=skinny_bf16_16x8 ", false},
            {bf16, GEMM_OP_N, GEMM_OP_T, 1, 14336, 4688, 0, "variant=wgmma_bf16_128x16x64_s11_splitk ", false},
            {bf16, GEMM_OP_N, GEMM_OP_T, 16, 1000, 4096, 0, "variant=skinny_bf16_16x16 ", false},
            {bf16, GEMM_OP_N, GEMM_OP_T, 9, 4096, 8192, 0, "variant=skinny_bf16_16x16 ", false},
            {bf16, GEMM_OP_N, GEMM_OP_T, 16, 4096, 8200, 0, "variant=wgmma_bf16_256x16x64_s6_splitk ", false},
            {bf16, GEMM_OP_N, GEMM_OP_T, 17, 4096, 8192, 0, "variant=skinny_bf16_16x32 ", false},
            {bf16, GEMM_OP_N, GEMM_OP_T, 32, 4096, 3000, 0, "variant=skinny_bf16_16x32 ", false},
            {bf16, GEMM_OP_N, GEMM_OP_T, 16, 14336, 4096, 0, "variant=wgmma_bf16_128x16x64_s11_splitk ", false},
            {bf16, GEMM_OP_N, GEMM_OP_T, 12, 14336, 8256, 0, "variant=wgmma_bf16_256x16x64_s6_splitk ", false},
            {bf16, GEMM_OP_N, GEMM_OP_T, 9, 28672, 1280, 0, "variant=wgmma_bf16_256x16x64_s6_splitk ", false},
            {bf16, GEMM_OP_T, GEMM_OP_T, 8, 4096, 3000, 0, "variant=skinny_bf16_16x8 ", false},
            // X of one row stored along k by itself (row-major T): its leading dimension of one
            // element is no TMA tensor, so no tile computes it and W's size does not matter.
            {bf16, GEMM_OP_T, GEMM_OP_N, 1, 4096, 14336, 0, "variant=skinny_bf16_32x8_nn ", false},
            {bf16, GEMM_OP_T, GEMM_OP_T, 1, 14336, 14336, 0, "variant=skinny_bf16_16x8 ", false},
            {bf16, GEMM_OP_N, GEMM_OP_T, 24, 4096, 8200, 0, "variant=wgmma_bf16_256x64x64_s5_splitk ", false},
            {bf16, GEMM_OP_N, GEMM_OP_T, 32, 13000, 3000, 0, "variant=wgmma_bf16_128x64x64_s8_splitk ", false},
            {bf16, GEMM_OP_N, GEMM_OP_T, 33, 4096, 3000, 0, "variant=wgmma_bf16_128x64x64_s8_splitk ", false},
            {bf16, GEMM_OP_N, GEMM_OP_T, 97, 4096, 1000, 0, "variant=wgmma_bf16_128x128x64_s6_splitk ", false},
            {bf16, GEMM_OP_N, GEMM_OP_T, 128, 4096, 2000, 0, "variant=wgmma_bf16_64x128x64_s8_splitk ", false},
            {bf16, GEMM_OP_N, GEMM_OP_T, 128, 9000, 512, 0, "variant=wgmma_bf16_128x128x64_s6_splitk ", false}};
        // The trace line of cuda_tiled's default on x (row-major), its result checked.
        auto default_trace = [](const expectation &x) {
            gemm_case d = base_case(x.t, GEMM_ROW_MAJOR, x.ta, x.tb, x.m, x.n, x.k);
            d.lda = d.a().cols + x.pad;
            d.ldb = d.b().cols + x.pad;
            d.ldc = d.n;
            d.tf32 = x.tf32;
            const operands o = make_operands(d);
            std::vector<std::string> lines;
            run_result r;
            {
                selection_guard sel("cuda_tiled");
                stderr_capture capture;
                r = run_device_offset(d, o, 0);
                lines = capture.lines();
            }
            REQUIRE_MESSAGE(r.status == GEMM_STATUS_SUCCESS, r.error);
            CHECK_MESSAGE(compare_result(d, o, r.c, cpu_ref_result(d, o)).ok, d.describe());
            REQUIRE_MESSAGE(lines.size() == 1, "one trace line per call: run with GEMM_VERBOSE=1, as ctest does");
            return lines[0];
        };
        for (const expectation &x : defaults) {
            const std::string line = default_trace(x);
            INFO("trace: " << line);
            CHECK(line.find(x.variant) != std::string::npos);
        }
        // C of few columns in row-major (few rows in column-major: the skinny kernels' mirrors,
        // canonical T, N and T, T): the skinny kernels by the sizes above, and beyond them for C
        // of at most 16 such columns, or of 17 to 32 where the 128x128 tiles would cover fewer
        // than half of the SMs (32 tiles here; 112 in the last case, which takes the tiles). A C
        // of 20 x 4 is read as stored (4 columns in column-major).
        const expectation mirrors[] = {
            {bf16, GEMM_OP_N, GEMM_OP_T, 4096, 8, 4096, 0, "variant=skinny_bf16_16x8 ", false},
            {bf16, GEMM_OP_T, GEMM_OP_T, 4096, 8, 4096, 0, "variant=skinny_bf16_32x8_nn ", false},
            {bf16, GEMM_OP_N, GEMM_OP_T, 3000, 32, 4096, 0, "variant=skinny_bf16_16x32 ", false},
            {bf16, GEMM_OP_T, GEMM_OP_T, 20, 4, 4096, 0, "variant=skinny_bf16_16x32 ", false},
            {bf16, GEMM_OP_N, GEMM_OP_T, 9000, 8, 8000, 0, "variant=skinny_bf16_16x8 ", false},
            {bf16, GEMM_OP_T, GEMM_OP_T, 9000, 16, 8000, 0, "variant=skinny_bf16_32x16_nn ", false},
            {bf16, GEMM_OP_N, GEMM_OP_T, 4096, 32, 9000, 0, "variant=skinny_bf16_16x32 ", false},
            {bf16, GEMM_OP_N, GEMM_OP_T, 14336, 32, 4096, 0, "variant=wgmma_bf16_128x128x64_s6_splitk ", false}};
        for (const expectation &x : mirrors) {
            const std::string line = default_trace(x);
            INFO("trace: " << line);
            CHECK(line.find(x.variant) != std::string::npos);
        }
    }
}

// ---- the built-in rule for device batches: one ctest with GEMM_VERBOSE=1 and no tune cache ---

namespace {

// Runs the cases as one gemm_ex_grouped call (a group each, bf16 -> f32, column-major) on device
// memory under auto; returns the trace lines and checks every C against cpu_ref.
std::vector<std::string> traced_grouped(const std::vector<gemm_case> &cases, const std::vector<int64_t> &sizes) {
    std::vector<operands> ops;
    std::vector<gemm_op_t> ta, tb;
    std::vector<int64_t> m, n, k, lda, ldb, ldc;
    std::vector<float> alpha, beta;
    std::vector<const gemm_case *> of_matrix;
    for (std::size_t g = 0; g < cases.size(); ++g) {
        const gemm_case &x = cases[g];
        ta.push_back(x.transa), tb.push_back(x.transb), m.push_back(x.m), n.push_back(x.n), k.push_back(x.k);
        lda.push_back(x.lda), ldb.push_back(x.ldb), ldc.push_back(x.ldc);
        alpha.push_back(float(x.alpha)), beta.push_back(float(x.beta));
        for (int64_t i = 0; i < sizes[g]; ++i) {
            ops.push_back(make_operands(x, 700 + ops.size()));
            of_matrix.push_back(&x);
        }
    }
    batch_buffers bufs(memory::device, ops);
    std::vector<std::string> lines;
    {
        stderr_capture capture;
        gemm_status_t s =
            gemm_ex_grouped(GEMM_COL_MAJOR, ta.data(), tb.data(), m.data(), n.data(), k.data(), alpha.data(),
                            bufs.pa.data(), GEMM_BF16, lda.data(), bufs.pb.data(), GEMM_BF16, ldb.data(), beta.data(),
                            bufs.pc.data(), GEMM_F32, ldc.data(), int64_t(cases.size()), sizes.data(), GEMM_F32);
        CUDA_REQUIRE(cudaDeviceSynchronize());
        lines = capture.lines();
        REQUIRE_MESSAGE(s == GEMM_STATUS_SUCCESS, gemm_last_error());
    }
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const gemm_case &x = *of_matrix[i];
        comparison cmp = compare_result(x, ops[i], bufs.c[i]->read(), cpu_ref_result(x, ops[i]));
        CHECK_MESSAGE(cmp.ok, "matrix " << i << " " << x.describe() << ": " << cmp.first);
    }
    return lines;
}

}  // namespace

TEST_SUITE("gpu_batch_trace" * doctest::skip()) {
    TEST_CASE("gpu_batch_trace: untuned, small bf16 groups take cuda_tiled's one launch, many of one shape cuBLAS's "
              "batched call") {
        if (!has_backend("cuda_tiled") || !has_backend("cublas")) {
            MESSAGE("cuda_tiled or cublas not available: nothing checked");
            return;
        }
        std::vector<gemm_case> small;
        for (auto [m, n, k, ta] : {std::tuple{40, 24, 56, GEMM_OP_N}, std::tuple{64, 64, 64, GEMM_OP_T},
                                   std::tuple{17, 90, 33, GEMM_OP_N}}) {
            small.push_back(base_case({GEMM_BF16, GEMM_F32}, GEMM_COL_MAJOR, ta, GEMM_OP_N, m, n, k));
            set_leading_dims(small.back(), 0);
        }
        std::vector<std::string> lines = traced_grouped(small, {1, 2, 1});
        REQUIRE(lines.size() == 3);  // one per group, for the one launch that served them all
        for (const std::string &line : lines) {
            INFO("trace: " << line);
            CHECK(line.find("backend=cuda_tiled variant=mma_bf16_64x64") != std::string::npos);
            CHECK(line.find("serve this batch in one launch") != std::string::npos);
            CHECK(line.find("note=\"4 matrices, up to 128 a launch\"") != std::string::npos);
        }
        gemm_case many = base_case({GEMM_BF16, GEMM_F32}, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 64, 64, 64);
        set_leading_dims(many, 0);
        lines = traced_grouped({many}, {16});
        REQUIRE(lines.size() == 1);
        INFO("trace: " << lines[0]);
        CHECK(lines[0].find("backend=cublas variant=cublasGemmBatchedEx_64") != std::string::npos);
    }
}

// ---- staging in panels: one ctest with GEMM_VERBOSE=1 ----------------------------------------

namespace {

// x as f32 values in [-1, 1], a different sequence for each salt.
void fill_floats(bytes &x, unsigned salt) {
    float *f = reinterpret_cast<float *>(x.data());
    for (std::size_t i = 0; i < x.size() / 4; ++i) f[i] = float((i * 2654435761u + salt) % 2001u) / 1000.0f - 1.0f;
}

// Largest |C(i,j) - (alpha * sum_l A(i,l) B(l,j) + beta * C0(i,j))| / (|alpha| sum_l |A(i,l) B(l,j)|
// + |beta C0(i,j)|) over 64 entries; column-major f32 NN.
double sampled_error(int64_t m, int64_t n, int64_t k, const float *a, const float *b, const float *c0, const float *c,
                     double alpha, double beta) {
    double worst = 0;
    for (int s = 0; s < 64; ++s) {
        const int64_t i = (s * 7919) % m, j = (s * 104729 + 17) % n;
        double sum = 0, mag = 0;
        for (int64_t l = 0; l < k; ++l) {
            const double t = double(a[i + l * m]) * double(b[l + j * k]);
            sum += t;
            mag += std::fabs(t);
        }
        const double want = alpha * sum + beta * double(c0[i + j * m]);
        const double scale = std::fabs(alpha) * mag + std::fabs(beta * double(c0[i + j * m])) + 1e-30;
        worst = std::max(worst, std::fabs(double(c[i + j * m]) - want) / scale);
    }
    return worst;
}

}  // namespace

TEST_SUITE("gpu_staging_trace" * doctest::skip()) {
    TEST_CASE("gpu_staging_trace: a large host-pointer GEMM is offloaded in tiles, pageable and page-locked, beta 0 "
              "and not") {
        // 256 x 4096 x 8192: four tiles of 256 x 1024, A and each quarter of B copied once.
        const int64_t m = 256, n = 4096, k = 8192;
        bytes a_init(std::size_t(m * k) * 4), b_init(std::size_t(k * n) * 4), c_init(std::size_t(m * n) * 4);
        fill_floats(a_init, 1), fill_floats(b_init, 2), fill_floats(c_init, 3);
        for (const std::string &name : gpu_backends()) {
            if (name == "cublasxt") continue;  // its own tiling, not the library's staging
            selection_guard sel(name);
            for (memory kind : {memory::host, memory::pinned})
                for (double beta : {0.0, 0.5}) {
                    buffer a(kind, a_init), b(kind, b_init), c(kind, c_init);
                    const float alpha_f = 0.75f, beta_f = float(beta);
                    std::vector<std::string> lines;
                    gemm_status_t s;
                    {
                        stderr_capture capture;
                        s = gemm_sgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, m, n, k, alpha_f,
                                       static_cast<const float *>(a.get()), m, static_cast<const float *>(b.get()), k,
                                       beta_f, static_cast<float *>(c.get()), m);
                        lines = capture.lines();
                    }
                    const std::string where = name + " " + memory_name(kind) + " beta " + std::to_string(beta);
                    REQUIRE_MESSAGE(s == GEMM_STATUS_SUCCESS, where << ": " << gemm_last_error());
                    bytes out = c.read();
                    const double error = sampled_error(m, n, k, reinterpret_cast<const float *>(a_init.data()),
                                                       reinterpret_cast<const float *>(b_init.data()),
                                                       reinterpret_cast<const float *>(c_init.data()),
                                                       reinterpret_cast<const float *>(out.data()), 0.75, beta);
                    CHECK_MESSAGE(error < 1e-5, where << ": relative error " << error);
                    REQUIRE(lines.size() == 1);
                    INFO("trace: " << lines[0]);
                    CHECK(lines[0].find("host pointers offloaded: 4 tiles of 256x1024 (A and B stay on the device, "
                                        "each copied once); H2D ") != std::string::npos);
                    CHECK(lines[0].find(kind == memory::pinned
                                            ? "all page-locked: direct DMA"
                                            : "packed through page-locked staging") != std::string::npos);
                    check_no_cuda_error(where);
                }
        }
    }
}

// ---- host memory in many tiles: one ctest with GEMM_OFFLOAD_MAX_DEVICE_BYTES=256K, GEMM_VERBOSE=1 ---

TEST_SUITE("gpu_offload" * doctest::skip()) {
    // With 256 KiB of device memory a thread's offload cuts these problems into tiles of 16 to 128
    // rows and columns, ragged at the edges, and keeps only some of A or B on the device at once.
    TEST_CASE("gpu_offload: host memory out of core in ragged tiles: every type, op, layout, ld, beta, batch") {
        struct size3 {
            int64_t m, n, k;
        };
        const size3 sizes[] = {{97, 131, 70}, {300, 45, 33}, {31, 257, 129}, {200, 200, 1}};
        tally tl;
        int64_t counter = 0;
        for (type_pair t : all_types)
            for (size3 z : sizes)
                for (gemm_layout_t l : {GEMM_COL_MAJOR, GEMM_ROW_MAJOR}) {
                    const gemm_op_t other = is_complex(t.ab) ? GEMM_OP_C : GEMM_OP_T;
                    gemm_case c = base_case(t, l, counter % 2 ? other : GEMM_OP_N, counter % 3 ? GEMM_OP_N : other, z.m,
                                            z.n, z.k);
                    set_leading_dims(c, counter % 3);
                    scalars sc = scalar_cycle[counter % 5];
                    set_scalars(c, sc.alpha, sc.beta, alpha_imag, beta_imag);
                    if (counter % 4 == 1) {
                        set_batch(c, 3, counter % 8 == 1, counter % 8 == 5, 2);
                        c.api = entry::ex;
                    }
                    ++counter;
                    check_case(c, tl, {memory::host, memory::pinned});
                }
        report(tl);
    }

    TEST_CASE("gpu_offload: the trace names the tiles and the passes out of core") {
        gemm_case c = base_case({GEMM_F32, GEMM_F32}, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 300, 400, 100);
        set_leading_dims(c, 0);
        operands o = make_operands(c);
        for (const std::string &name : gpu_backends()) {
            if (name == "cublasxt") continue;  // its own tiling
            selection_guard sel(name);
            std::vector<std::string> lines;
            run_result r;
            {
                stderr_capture capture;
                r = run_in(memory::host, c, o, nullptr);
                lines = capture.lines();
            }
            REQUIRE_MESSAGE(r.status == GEMM_STATUS_SUCCESS, name << ": " << r.error);
            REQUIRE(lines.size() == 1);
            INFO(name << " trace: " << lines[0]);
            CHECK(lines[0].find("host pointers offloaded: ") != std::string::npos);
            CHECK(lines[0].find(" tiles of ") != std::string::npos);
            CHECK(lines[0].find(" times: out of core)") != std::string::npos);
        }
    }

    TEST_CASE("gpu_offload: a k too long for one tile within the cap fails with ALLOC_FAILED, C untouched") {
        gemm_case c = base_case({GEMM_F32, GEMM_F32}, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 20, 20, 100000);
        set_leading_dims(c, 0);
        c.beta = 0.5;
        operands o = make_operands(c);
        for (const std::string &name : gpu_backends()) {
            if (name == "cublasxt") continue;
            selection_guard sel(name);
            run_result r = run_in(memory::host, c, o, nullptr);
            CHECK_MESSAGE(r.status == GEMM_STATUS_ALLOC_FAILED, name << ": " << r.error);
            CHECK_MESSAGE(r.error.find("GEMM_OFFLOAD_MAX_DEVICE_BYTES") != std::string::npos, r.error);
            CHECK_MESSAGE(r.c == o.c0, name << ": C changed");
            check_no_cuda_error(name);
        }
    }
}

// ---- one call spread over several GPUs: ctest gpu.offload_spread, GEMM_OFFLOAD_DEVICES=0,0 ----
// Device 0 named twice takes two shares, each run by its own thread's engine: the spreading
// path (the cut, the worker thread, both shares at once, the trace) on a machine of one GPU.

TEST_SUITE("gpu_offload_spread" * doctest::skip()) {
    TEST_CASE("gpu_offload_spread: C's columns, rows and batch matrices shared out, pageable and page-locked") {
        const char *devices = std::getenv("GEMM_OFFLOAD_DEVICES");
        REQUIRE_MESSAGE((devices && std::string(devices) == "0,0"),
                        "run with GEMM_OFFLOAD_DEVICES=0,0 GEMM_VERBOSE=1 (CTest: gpu.offload_spread)");
        struct spread_case {
            int64_t m, n, k, batch;
            const char *cut;  // what the trace names; "" for a problem too small to spread
        };
        // A share is cut only where each moves at least 32 MiB: with beta = 0 these move 84, 84,
        // 96 and 1.3 MB in all (C's bytes once more with beta != 0).
        const spread_case cases[] = {{2048, 8192, 512, 1, "offloaded to 2 GPUs by C's columns"},
                                     {8192, 2048, 512, 1, "offloaded to 2 GPUs by C's rows"},
                                     {2048, 2048, 2048, 2, "offloaded to 2 GPUs by C's batch matrices"},
                                     {300, 400, 100, 1, ""}};
        for (const spread_case &sc : cases) {
            const int64_t m = sc.m, n = sc.n, k = sc.k, batch = sc.batch;
            bytes a_init(std::size_t(m * k * batch) * 4), b_init(std::size_t(k * n * batch) * 4),
                c_init(std::size_t(m * n * batch) * 4);
            fill_floats(a_init, 4), fill_floats(b_init, 5), fill_floats(c_init, 6);
            for (const std::string &name : gpu_backends()) {
                if (name == "cublasxt") continue;  // its own devices (GEMM_XT_DEVICES)
                selection_guard sel(name);
                for (memory kind : {memory::host, memory::pinned}) {
                    buffer a(kind, a_init), b(kind, b_init), c(kind, c_init);
                    const double alpha = 0.75, beta = kind == memory::host ? 0.5 : 0.0;
                    std::vector<std::string> lines;
                    gemm_status_t s;
                    {
                        stderr_capture capture;
                        s = gemm_sgemm_strided_batched(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, m, n, k, float(alpha),
                                                       static_cast<const float *>(a.get()), m, m * k,
                                                       static_cast<const float *>(b.get()), k, k * n, float(beta),
                                                       static_cast<float *>(c.get()), m, m * n, batch);
                        lines = capture.lines();
                    }
                    const std::string where = name + " " + memory_name(kind) + " " + std::to_string(m) + "x" +
                                              std::to_string(n) + "x" + std::to_string(k) + " batch " +
                                              std::to_string(batch);
                    REQUIRE_MESSAGE(s == GEMM_STATUS_SUCCESS, where << ": " << gemm_last_error());
                    bytes out = c.read();
                    const float *fa = reinterpret_cast<const float *>(a_init.data()),
                                *fb = reinterpret_cast<const float *>(b_init.data()),
                                *fc = reinterpret_cast<const float *>(c_init.data()),
                                *fo = reinterpret_cast<const float *>(out.data());
                    for (int64_t x = 0; x < batch; ++x) {
                        const double error = sampled_error(m, n, k, fa + x * m * k, fb + x * k * n, fc + x * m * n,
                                                           fo + x * m * n, alpha, beta);
                        CHECK_MESSAGE(error < 1e-5, where << " matrix " << x << ": relative error " << error);
                    }
                    REQUIRE(lines.size() == 1);
                    INFO(where << " trace: " << lines[0]);
                    if (*sc.cut) {
                        CHECK(lines[0].find(sc.cut) != std::string::npos);
                        CHECK(lines[0].find("; GPU 0 (0 to ") != std::string::npos);
                    } else {
                        CHECK(lines[0].find("host pointers offloaded: ") != std::string::npos);
                    }
                    check_no_cuda_error(where);
                }
            }
        }
    }
}

// ---- the machine's rates for host memory: one ctest with its own tune cache and GEMM_VERBOSE=1 ---

namespace {

// The rates line of type `type` in the cache file at path, as numbers: the fastest host
// backend's rate (GFLOP/s), fixed cost (us) and bandwidth (GB/s), the device's rate (GFLOP/s),
// the link (GB/s) and the GPU's fixed cost (us), pageable and page-locked, the measurement's
// time (ms); the backends' names. Empty names when there is none.
struct rates_seen {
    struct host_part {
        double gflops = 0, fixed = 0, gbs = 0;
    };
    std::string host_backend, gpu_backend;
    double host = 0, host_fixed = 0, host_gbs = 0, device = 0, link = 0, fixed = 0, locked_link = 0, locked_fixed = 0,
           measured_ms = 0;
    std::vector<host_part> hosts;  // every host backend's

    // The estimates of the rule the rates follow, for a product of `flops` operations moving
    // `bytes` (the host's: its shortest).
    double host_us(double flops, double bytes) const {
        double best = INFINITY;
        for (const host_part &h : hosts)
            best = std::min(best, h.fixed + std::max(flops / h.gflops / 1e3, h.gbs > 0 ? bytes / h.gbs / 1e3 : 0.0));
        return best;
    }
    double gpu_us(double flops, double bytes, bool page_locked) const {
        return page_locked ? locked_fixed + bytes / locked_link / 1e3 + flops / device / 1e3
                           : fixed + bytes / link / 1e3 + flops / device / 1e3;
    }
};
rates_seen rates_in(const std::string &path, const std::string &type) {
    rates_seen r;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("rates " + type + " |", 0) != 0) continue;
        std::stringstream parts(line);
        for (std::string part; std::getline(parts, part, '|');) {
            std::istringstream w(part);
            std::string word, name, u1, u2, u3;
            w >> word;
            if (word == "host") {
                rates_seen::host_part h;
                w >> name >> h.gflops >> u1 >> h.fixed >> u2 >> h.gbs >> u3;
                CHECK_MESSAGE((u1 == "GFLOP/s" && u2 == "us" && u3 == "GB/s"), line);
                r.hosts.push_back(h);
                if (r.host_backend.empty()) {  // the first is the fastest
                    r.host_backend = name;
                    r.host = h.gflops;
                    r.host_fixed = h.fixed;
                    r.host_gbs = h.gbs;
                }
            } else if (word == "gpu") {
                w >> r.gpu_backend >> r.device >> u1 >> r.link >> u2 >> r.fixed >> u3;
                CHECK_MESSAGE((u1 == "GFLOP/s" && u2 == "GB/s" && u3 == "us"), line);
            } else if (word == "page-locked") {
                w >> r.locked_link >> u1 >> r.locked_fixed >> u2;
                CHECK_MESSAGE((u1 == "GB/s" && u2 == "us"), line);
            } else if (word == "measured") {
                w >> r.measured_ms >> u1;
                CHECK_MESSAGE(u1 == "ms", line);
            }
        }
    }
    return r;
}

// The trace line of one untuned f32 NN product with beta 0 on host memory (page-locked with
// cudaMallocHost, or pageable), and its result's largest error.
struct traced_call {
    std::string trace;
    double error = 0;
};
traced_call call_traced(int64_t m, int64_t n, int64_t k, bool page_locked) {
    const memory kind = page_locked ? memory::pinned : memory::host;
    std::vector<float> a(std::size_t(m * k)), b(std::size_t(k * n)), zeros(std::size_t(m * n), 0.0f);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = float(double(i * 37 % 101) / 50.0 - 1.0);
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = float(double(i * 53 % 97) / 48.0 - 1.0);
    auto as_bytes = [](const std::vector<float> &v) {
        return bytes(reinterpret_cast<const unsigned char *>(v.data()),
                     reinterpret_cast<const unsigned char *>(v.data() + v.size()));
    };
    buffer ba(kind, as_bytes(a)), bb(kind, as_bytes(b)), bc(kind, bytes(zeros.size() * sizeof(float), 0xff));
    traced_call t;
    gemm_status_t s;
    std::vector<std::string> lines;
    {
        stderr_capture capture;
        s = gemm_sgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, m, n, k, 1.0f, static_cast<const float *>(ba.get()), m,
                       static_cast<const float *>(bb.get()), k, 0.0f, static_cast<float *>(bc.get()), m);
        lines = capture.lines();
    }
    REQUIRE_MESSAGE(s == GEMM_STATUS_SUCCESS, gemm_last_error());
    REQUIRE(lines.size() == 1);
    t.trace = lines[0];
    const bytes out = bc.read();
    std::vector<float> c(zeros.size());
    std::memcpy(c.data(), out.data(), out.size());
    t.error = sampled_error(m, n, k, a.data(), b.data(), zeros.data(), c.data(), 1.0, 0.0);
    return t;
}

}  // namespace

TEST_SUITE("gpu_rates" * doctest::skip()) {
    TEST_CASE("gpu_rates: the first untuned host call measures the machine's rates once and follows them") {
        const char *path = std::getenv("GEMM_TUNE_CACHE");
        REQUIRE(path != nullptr);
        std::remove(path);  // before the library first reads it
        if (!has_backend("cublas")) {
            MESSAGE("cublas not available or not selected: not tested");
            return;
        }
        // A small host call (under 2^21 operations) measures at most the host part, and never
        // starts the GPU for it: the rates line has no GPU part yet.
        {
            std::vector<float> x(64, 1.0f), y(64, 0.0f);
            stderr_capture capture;
            REQUIRE(gemm_sgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 8, 8, 8, 1.0f, x.data(), 8, x.data(), 8, 0.0f,
                               y.data(), 8) == GEMM_STATUS_SUCCESS);
            CHECK(y[0] == 8.0f);
        }
        CHECK(rates_in(path, "f32").gpu_backend.empty());
        // An untuned host call (2048 x 2048 x 1024): the first needs the GPU part of the f32
        // rates and measures it, within 0.5 s, and goes to the side the rates' estimate, worked
        // out here again, says is faster.
        const int64_t m = 2048, n = 2048, k = 1024;
        std::vector<float> a(std::size_t(m * k)), b(std::size_t(k * n)), c(std::size_t(m * n), NAN);
        for (std::size_t i = 0; i < a.size(); ++i) a[i] = float(double(i * 37 % 101) / 50.0 - 1.0);
        for (std::size_t i = 0; i < b.size(); ++i) b[i] = float(double(i * 53 % 97) / 48.0 - 1.0);
        std::vector<std::string> first, second;
        gemm_status_t s;
        {
            stderr_capture capture;
            s = gemm_sgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, m, n, k, 1.0f, a.data(), m, b.data(), k, 0.0f,
                           c.data(), m);
            first = capture.lines();
        }
        REQUIRE_MESSAGE(s == GEMM_STATUS_SUCCESS, gemm_last_error());
        {
            stderr_capture capture;
            s = gemm_sgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, m, n, k, 1.0f, a.data(), m, b.data(), k, 0.0f,
                           c.data(), m);
            second = capture.lines();
        }
        REQUIRE_MESSAGE(s == GEMM_STATUS_SUCCESS, gemm_last_error());
        std::vector<float> zeros(c.size(), 0.0f);
        CHECK(sampled_error(m, n, k, a.data(), b.data(), zeros.data(), c.data(), 1.0, 0.0) < 1e-5);
        const rates_seen r = rates_in(path, "f32");
        INFO("rates: host " << r.host_backend << " " << r.host << " GFLOP/s " << r.host_fixed << " us " << r.host_gbs
                            << " GB/s, gpu " << r.gpu_backend << " " << r.device << " GFLOP/s " << r.link << " GB/s "
                            << r.fixed << " us, page-locked " << r.locked_link << " GB/s " << r.locked_fixed
                            << " us; measured in " << r.measured_ms << " ms");
        REQUIRE(r.gpu_backend == "cublas");
        CHECK(r.host > 0);
        CHECK(r.device > r.host);
        CHECK(r.link > 0);
        CHECK(r.fixed >= 0);
        // DMA straight from page-locked memory outruns staging pageable memory.
        CHECK(r.locked_link > r.link);
        CHECK(r.locked_fixed >= 0);
        CHECK(r.measured_ms > 0);
        // The budget is 0.5 s, CUDA's start included, which a test process beside others may
        // find slower: twice the budget fails.
        CHECK(r.measured_ms <= 1000);
        CHECK(rates_in(path, "f64").host_backend.empty());  // measured per type, when one needs them
        const double flops = 2.0 * m * n * k, bytes = 4.0 * (m * k + k * n + m * n);
        const double host_us = r.host_us(flops, bytes), gpu_us = r.gpu_us(flops, bytes, false);
        REQUIRE(first.size() == 1);
        REQUIRE(second.size() == 1);
        INFO("first trace: " << first[0] << "; estimated gpu " << gpu_us << " us, host " << host_us << " us");
        CHECK(first[0].find("rates measured now, in ") != std::string::npos);
        CHECK(second[0].find("rates measured now") == std::string::npos);  // once
        for (const std::string &line : {first[0], second[0]}) {
            if (gpu_us < host_us) {
                CHECK(line.find(" backend=cublas ") != std::string::npos);
                CHECK(line.find("the GPU for host memory where this machine's rates say it is faster (estimated ") !=
                      std::string::npos);
            } else {
                CHECK(line.find(" backend=" + r.host_backend + " ") != std::string::npos);
                CHECK(line.find("the host backend this machine's rates estimate fastest") != std::string::npos);
            }
        }
        // A square the rates send to the GPU from page-locked memory and keep on the host from
        // pageable memory, where one exists: the call's operands decide which link counts.
        int64_t between = 0;
        for (int64_t side = 64; side <= 4096 && !between; side += 32) {
            const double x = double(side), f = 2.0 * x * x * x, bs = 12.0 * x * x;
            // With a margin: the process keeps the rates unrounded, the file to 6 digits.
            if (1.05 * r.gpu_us(f, bs, true) < r.host_us(f, bs) && 1.05 * r.host_us(f, bs) < r.gpu_us(f, bs, false) &&
                f >= double(1 << 21))
                between = side;
        }
        if (!between) {
            MESSAGE("no square between the page-locked and the pageable crossover: that choice not tested");
        } else {
            INFO("square " << between);
            const traced_call locked = call_traced(between, between, between, true);
            const traced_call pageable = call_traced(between, between, between, false);
            CHECK(locked.error < 1e-5);
            CHECK(pageable.error < 1e-5);
            CHECK_MESSAGE(locked.trace.find(" backend=cublas ") != std::string::npos, locked.trace);
            CHECK_MESSAGE(locked.trace.find("from page-locked memory") != std::string::npos, locked.trace);
            CHECK_MESSAGE(pageable.trace.find("the host backend this machine's rates estimate fastest") !=
                              std::string::npos,
                          pageable.trace);
            // gemm_measure's operands, page-locked or not, are weighed as a call's would be.
            for (int pinned : {1, 0}) {
                gemm_desc_t d;
                gemm_desc_init(&d, GEMM_F32, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, between, between, between);
                gemm_measure_options_t o;
                gemm_measure_options_init(&o);
                o.budget_ms = 5;
                o.min_samples = 1;
                o.rounds = 1;
                o.pinned = pinned;
                const char *names[] = {"auto"};
                gemm_measurement_t result;
                std::vector<std::string> lines;
                {
                    stderr_capture capture;
                    REQUIRE_MESSAGE(gemm_measure(&d, names, 1, &o, &result) == GEMM_STATUS_SUCCESS, gemm_last_error());
                    lines = capture.lines();
                }
                INFO("page-locked " << pinned);
                CHECK(result.correct == 1);
                REQUIRE_FALSE(lines.empty());
                for (const std::string &line : lines) {
                    if (line.find("backend=") == std::string::npos) continue;
                    INFO(line);
                    CHECK((line.find(" backend=cublas ") != std::string::npos) == bool(pinned));
                    CHECK((line.find("from page-locked memory") != std::string::npos) == bool(pinned));
                }
            }
        }
    }
}

TEST_CASE("gpu: cublaslt variant ids") {
    CHECK(gemm_set_backend("cublaslt:fastest") == GEMM_STATUS_INVALID_VALUE);
    CHECK(gemm_set_backend("cublaslt:algo1_tile2") == GEMM_STATUS_INVALID_VALUE);
    CHECK(gemm_set_backend("cublaslt:algo01_tile0_stages0_splitk1_red0_swz0_cust0_inner0_cluster0") ==
          GEMM_STATUS_INVALID_VALUE);  // not in canonical form
    gemm_case c = base_case({GEMM_F32, GEMM_F32}, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 64, 64, 64);
    set_leading_dims(c, 0);
    c.beta = 1.0;
    operands o = make_operands(c);
    // Syntactically valid, but no such algorithm: refused when run, C untouched.
    selection_guard sel("cublaslt:algo99999_tile0_stages0_splitk1_red0_swz0_cust0_inner0_cluster0");
    buffer a(memory::device, o.a), b(memory::device, o.b), cbuf(memory::device, o.c0);
    gemm_status_t s = call_gemm(c, a.get(), b.get(), cbuf.get());
    CHECK_MESSAGE(s == GEMM_STATUS_NOT_SUPPORTED, "status " << int(s) << ": " << gemm_last_error());
    CHECK(cbuf.read() == o.c0);
    check_no_cuda_error("cublaslt bogus variant");
}

// ---- cublasxt -------------------------------------------------------------------------------

TEST_CASE("gpu: cublasxt refuses device memory, half types and unknown variants, C unchanged") {
    if (!has_backend("cublasxt")) {
        MESSAGE("cublasxt not available or not selected: not tested");
        return;
    }
    CHECK(gemm_set_backend("cublasxt:b1000") == GEMM_STATUS_INVALID_VALUE);
    CHECK(gemm_set_backend("cublasxt:b1024_pinned") == GEMM_STATUS_INVALID_VALUE);
    selection_guard sel("cublasxt");
    gemm_case c = base_case({GEMM_F32, GEMM_F32}, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 8, 9, 10);
    set_leading_dims(c, 0);
    c.beta = 1.0;
    operands o = make_operands(c);
    for (memory kind : {memory::device, memory::managed}) {
        buffer a(kind, o.a), b(kind, o.b), cbuf(kind, o.c0);
        gemm_status_t s = call_gemm(c, a.get(), b.get(), cbuf.get());
        CHECK_MESSAGE(s == GEMM_STATUS_NOT_SUPPORTED, memory_name(kind) << ": status " << int(s));
        CHECK_MESSAGE(std::string(gemm_last_error()).find("takes host memory") != std::string::npos, gemm_last_error());
        CHECK(cbuf.read() == o.c0);
        check_no_cuda_error(std::string("cublasxt ") + memory_name(kind));
    }
    gemm_case h = base_case({GEMM_F16, GEMM_F32}, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 8, 9, 10);
    set_leading_dims(h, 0);
    operands ho = make_operands(h);
    bytes got = ho.c0;
    CHECK(call_gemm(h, ho.a.data(), ho.b.data(), got.data()) == GEMM_STATUS_NOT_SUPPORTED);
    CHECK(got == ho.c0);
}

TEST_CASE("gpu: cublasxt every block dimension, pageable and page-locked memory, against cpu_ref") {
    if (!has_backend("cublasxt")) {
        MESSAGE("cublasxt not available or not selected: not tested");
        return;
    }
    const char *variants[] = {"", "b512", "b1024", "b2048", "b4096", "b8192"};
    int64_t checked = 0;
    for (type_pair t : {type_pair{GEMM_F32, GEMM_F32}, type_pair{GEMM_F64, GEMM_F64}})
        for (gemm_layout_t l : {GEMM_COL_MAJOR, GEMM_ROW_MAJOR}) {
            // Three blocks of 512 down m, two across n with a ragged edge, a padded lda.
            gemm_case c = base_case(t, l, l == GEMM_ROW_MAJOR ? GEMM_OP_T : GEMM_OP_N, GEMM_OP_N, 1100, 700, 600);
            set_leading_dims(c, 3);
            c.alpha = -0.75;
            c.beta = l == GEMM_ROW_MAJOR ? 0.0 : 1.5;
            operands o = make_operands(c);
            std::vector<double> expected = cpu_ref_result(c, o);
            for (const char *v : variants)
                for (memory kind : {memory::host, memory::pinned}) {
                    std::string spec = std::string("cublasxt:") + v;
                    selection_guard sel(spec);
                    run_result r = run_in(kind, c, o, nullptr);
                    check_variant_run(spec + " " + memory_name(kind) + " " + c.describe(), c, o, r, expected);
                    ++checked;
                }
        }
    MESSAGE(checked << " cublasxt runs checked");
}

namespace {

// The lowest free memory of every device while it runs, sampled each half millisecond.
class device_memory_watch {
public:
    device_memory_watch() {
        int devices = 0;
        cudaGetDeviceCount(&devices);
        for (int d = 0; d < devices; ++d) {
            std::size_t free = 0, total = 0;
            CUDA_REQUIRE(cudaSetDevice(d));
            CUDA_REQUIRE(cudaFree(nullptr));  // the context exists before the baseline
            CUDA_REQUIRE(cudaMemGetInfo(&free, &total));
            baseline_.push_back(free);
        }
        CUDA_REQUIRE(cudaSetDevice(0));
        lowest_ = baseline_;
        sampler_ = std::thread([this] {
            while (!stop_) {
                for (std::size_t d = 0; d < baseline_.size(); ++d) {
                    std::size_t free = 0, total = 0;
                    cudaSetDevice(int(d));
                    if (cudaMemGetInfo(&free, &total) == cudaSuccess) lowest_[d] = std::min(lowest_[d], free);
                }
                std::this_thread::sleep_for(std::chrono::microseconds(500));
            }
        });
    }
    ~device_memory_watch() { finish(); }
    void finish() {
        if (sampler_.joinable()) {
            stop_ = true;
            sampler_.join();
        }
    }
    std::size_t devices() const { return baseline_.size(); }
    std::size_t peak_bytes(std::size_t d) const { return baseline_[d] > lowest_[d] ? baseline_[d] - lowest_[d] : 0; }

private:
    std::vector<std::size_t> baseline_, lowest_;
    std::atomic<bool> stop_{false};
    std::thread sampler_;
};

// |C t - (alpha A (B t) + beta C0 t)| within f32's error bound for each row, for a random t:
// an O(n^2) check of a problem too large for the reference loop.
void check_projected(int64_t n, const std::vector<float> &a, const std::vector<float> &b, const std::vector<float> &c0,
                     const std::vector<float> &c, float alpha, float beta) {
    const std::size_t rows = static_cast<std::size_t>(n);
    std::vector<double> t(rows), bt(rows, 0.0), abs_bt(rows, 0.0);
    for (int64_t j = 0; j < n; ++j) t[std::size_t(j)] = double((j * 7919) % 13) / 6.0 - 1.0;
    for (int64_t j = 0; j < n; ++j)
        for (int64_t l = 0; l < n; ++l) {
            double v = double(b[std::size_t(l + j * n)]) * t[std::size_t(j)];
            bt[std::size_t(l)] += v;
            abs_bt[std::size_t(l)] += std::fabs(v);
        }
    std::vector<double> want(rows, 0.0), bound(rows, 0.0), got(rows, 0.0);
    for (int64_t l = 0; l < n; ++l)
        for (int64_t i = 0; i < n; ++i) {
            double av = a[std::size_t(i + l * n)];
            want[std::size_t(i)] += alpha * av * bt[std::size_t(l)];
            bound[std::size_t(i)] += std::fabs(alpha * av) * abs_bt[std::size_t(l)];
        }
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < n; ++i) {
            std::size_t at = std::size_t(i + j * n);
            got[std::size_t(i)] += double(c[at]) * t[std::size_t(j)];
            want[std::size_t(i)] += double(beta) * c0[at] * t[std::size_t(j)];
            bound[std::size_t(i)] += std::fabs(double(beta) * c0[at] * t[std::size_t(j)]);
        }
    double gamma = 2.0 * double(n + 2) * unit_roundoff(GEMM_F32);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i)
        if (!(std::fabs(got[std::size_t(i)] - want[std::size_t(i)]) <= gamma * bound[std::size_t(i)])) ++bad;
    CHECK_MESSAGE(bad == 0, bad << " of " << n << " rows of C t outside the f32 error bound");
}

}  // namespace

// Run as its own process (CTest gpu.cublasxt_out_of_core) with GEMM_XT_MAX_DEVICE_BYTES set:
// the operands are larger than what cublasxt may hold on a device, and every device's peak
// use during the call stays under the cap.
TEST_CASE("gpu_xt_cap: a problem larger than GEMM_XT_MAX_DEVICE_BYTES, out of core") {
    const char *cap_text = std::getenv("GEMM_XT_MAX_DEVICE_BYTES");
    REQUIRE_MESSAGE(cap_text, "run with GEMM_XT_MAX_DEVICE_BYTES set (CTest: gpu.cublasxt_out_of_core)");
    char *suffix = nullptr;
    std::size_t cap = std::size_t(std::strtoull(cap_text, &suffix, 10));
    cap <<= *suffix == 'G' ? 30 : *suffix == 'M' ? 20 : *suffix == 'K' ? 10 : 0;
    REQUIRE(has_backend("cublasxt"));
    const int64_t n = 6144;
    const std::size_t count = std::size_t(n * n);
    REQUIRE(3 * count * sizeof(float) > cap);
    random_source rng(42);
    std::vector<float> a(count), b(count), c0(count);
    for (float &v : a) v = float(rng.uniform());
    for (float &v : b) v = float(rng.uniform());
    for (float &v : c0) v = float(rng.uniform());
    const float alpha = 0.5f, beta = -1.0f;

    for (const char *spec : {"cublasxt", "cublasxt:b1024"}) {
        selection_guard sel(spec);
        std::vector<float> c = c0;
        device_memory_watch watch;
        gemm_status_t s = gemm_sgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, n, n, n, alpha, a.data(), n, b.data(), n,
                                     beta, c.data(), n);
        watch.finish();
        REQUIRE_MESSAGE(s == GEMM_STATUS_SUCCESS, spec << ": " << gemm_last_error());
        for (std::size_t d = 0; d < watch.devices(); ++d) {
            MESSAGE(spec << ": device " << d << " peak " << (watch.peak_bytes(d) >> 20) << " MiB, cap " << (cap >> 20)
                         << " MiB, operands " << ((3 * count * sizeof(float)) >> 20) << " MiB");
            CHECK(watch.peak_bytes(d) <= cap);
        }
        CHECK(watch.peak_bytes(0) > 0);  // the sampler saw the call
        check_projected(n, a, b, c0, c, alpha, beta);
        check_no_cuda_error(spec);
    }
    // A block dimension whose buffers exceed the cap is refused before C is touched.
    selection_guard sel("cublasxt:b8192");
    std::vector<float> c = c0;
    gemm_status_t s =
        gemm_sgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, n, n, n, alpha, a.data(), n, b.data(), n, beta, c.data(), n);
    CHECK_MESSAGE(s == GEMM_STATUS_NOT_SUPPORTED, "status " << int(s) << ": " << gemm_last_error());
    CHECK(std::string(gemm_last_error()).find("GEMM_XT_MAX_DEVICE_BYTES") != std::string::npos);
    CHECK(c == c0);
}

// Run as its own process with GEMM_XT_DEVICES naming a device this machine lacks.
TEST_CASE("gpu_xt_missing_device: GEMM_XT_DEVICES naming a missing device") {
    const char *devices = std::getenv("GEMM_XT_DEVICES");
    REQUIRE_MESSAGE(devices, "run with GEMM_XT_DEVICES=0,63 (CTest: gpu.cublasxt_missing_device)");
    CHECK(gemm_set_backend("cublasxt") == GEMM_STATUS_BACKEND_UNAVAILABLE);
    CHECK_MESSAGE(std::string(gemm_last_error()).find("GEMM_XT_DEVICES names device 63") != std::string::npos,
                  gemm_last_error());
    CHECK(gemm_set_backend("cublas") == GEMM_STATUS_SUCCESS);  // the others are unaffected
    gemm_set_backend(nullptr);
}

// Run as its own process with GEMM_OFFLOAD_DEVICES naming a device this machine lacks.
TEST_CASE("gpu_offload_missing_device: GEMM_OFFLOAD_DEVICES naming a missing device") {
    const char *devices = std::getenv("GEMM_OFFLOAD_DEVICES");
    REQUIRE_MESSAGE(devices, "run with GEMM_OFFLOAD_DEVICES=0,63 (CTest: gpu.offload_missing_device)");
    float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, c[4] = {9, 9, 9, 9};
    for (const std::string &name : gpu_backends()) {
        if (name == "cublasxt") continue;
        selection_guard sel(name);
        CHECK(gemm_sgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2) ==
              GEMM_STATUS_INVALID_CONFIG);
        CHECK_MESSAGE(std::string(gemm_last_error()).find("GEMM_OFFLOAD_DEVICES names device 63") != std::string::npos,
                      name << ": " << gemm_last_error());
        CHECK(std::count(c, c + 4, 9.0f) == 4);  // C untouched
    }
    // Device pointers do not read the list.
    void *raw = nullptr;
    CUDA_REQUIRE(cudaMalloc(&raw, 12 * sizeof(float)));
    float *d = static_cast<float *>(raw);
    CUDA_REQUIRE(upload(d, a, sizeof a));
    CUDA_REQUIRE(upload(d + 4, b, sizeof b));
    {
        selection_guard sel("cublas");
        CHECK(gemm_sgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 2, 2, 2, 1.0f, d, 2, d + 4, 2, 0.0f, d + 8, 2) ==
              GEMM_STATUS_SUCCESS);
    }
    CUDA_REQUIRE(cudaMemcpy(c, d + 8, sizeof c, cudaMemcpyDeviceToHost));
    CHECK(c[0] == 1.0f);
    CHECK(c[3] == 4.0f);
    cudaFree(d);
}

namespace {

// Why there is no device, in the words of the library's CUDA backends (one device check,
// which tells a machine without a driver from a driver too old), else the runtime's.
std::string no_device_reason(cudaError_t e) {
    for (int64_t i = 0; i < gemm_backend_count(); ++i) {
        gemm_backend_info_t info{};
        if (gemm_backend_get_info(i, &info) == GEMM_STATUS_SUCCESS && std::string(info.name) == "cuda_naive" &&
            !info.available)
            return info.reason;
    }
    return std::string("no CUDA device (cudaGetDeviceCount: ") +
           (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices") + ")";
}

// CTest shows nothing a skipped test prints: the reason also goes to the file CTest names in
// GEMM_TEST_SKIP_REASON_FILE, which ctest prints after its summary (tests/CMakeLists.txt).
void report_skip(const std::string &reason) {
    std::printf("SKIPPED: %s\n", reason.c_str());
    const char *path = std::getenv("GEMM_TEST_SKIP_REASON_FILE");
    if (!path || !*path) return;
    if (std::FILE *f = std::fopen(path, "w")) {
        std::fprintf(f, "%s\n", reason.c_str());
        std::fclose(f);
    }
}

}  // namespace

int main(int argc, char **argv) {
    int devices = 0;
    cudaError_t e = cudaGetDeviceCount(&devices);
    if (e != cudaSuccess || devices == 0) {
        cudaGetLastError();
        report_skip(no_device_reason(e));
        return skip_exit_code;
    }
    doctest::Context context(argc, argv);
    return context.run();
}
