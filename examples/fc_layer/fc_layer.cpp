// fc_layer.cpp: a two-layer fully connected network (an MLP), its forward and backward passes
// written out with the gemm C API, row-major as frameworks store it:
//   layer 1  Z1 = X W1^T + b1, H1 = act(Z1)   X[B, D_in], W1[H, D_in], b1[H]; act ReLU or GELU
//   layer 2  Y  = H1 W2^T + b2                 W2[D_out, H], b2[D_out]
//   loss     L  = 0.5 sum((Y - T)^2)           T[B, D_out], a random target
// Each layer's forward pass is one gemm_ex_epilogue call: the bias per column of the row-major
// result, the activation, and for layer 1 aux saving Z1 for the backward pass. The backward pass
// is five calls; act'(Z1) and db1 ride on the product dY W2 as a *_BACKWARD epilogue with
// bias_grad, and db2 is a GEMM with a vector of ones. When training, layer 2's call also makes
// the loss's gradient dY = Y - T (C starts as T, beta = -1).
//
// Run: build/examples/fc_layer [--bench]
// It prints and checks:
//   1. "gradient check <act> <tensor>": on the CPU in f64 (B=5, D_in=7, H=6, D_out=3), every
//      entry of the gradients of W1, b1, W2, b2 and X against central finite differences of L,
//      for ReLU and GELU; the worst relative error of each tensor (limit 1e-6).
//   2. "gpu check <type> <act> <tensor>": with CUDA built in and a device present, the same
//      network on device memory in f64 and f32, its gradients against the CPU's (limits 1e-9
//      and 1e-4); else "GPU part skipped: no CUDA device".
//   3. With --bench: on the GPU, bf16 at an LLM MLP's size (B=4096, D_in=4096, H=14336,
//      D_out=4096), a loose check that fused and unfused results agree, then the forward and
//      the forward+backward pass timed with CUDA events on a stream set by gemm_set_stream,
//      median of 7 rounds of 10 steps: fused (the default selection, which lets cuBLASLt fuse
//      the epilogues it can) and unfused (cuBLAS's GEMM, then the library's pass over C), and
//      their ratio; on the CPU, f32 forward+backward at B=512, D_in=1024, H=2048, D_out=1024
//      with the default selection.
// GEMM_VERBOSE=1 shows each call's backend and whether its epilogue was fused or a pass.
// The exit status is 0 when every check passed.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <utility>
#include <vector>

#include <gemm/gemm.h>

#ifdef FC_LAYER_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace {

// ---- Errors: a failure is printed where it happens and returned as false ---------------------

bool ok(gemm_status_t s, const char *call) {
    if (s == GEMM_STATUS_SUCCESS) return true;
    std::fprintf(stderr, "fc_layer: %s failed: %s\n  %s\n", call, gemm_status_string(s), gemm_last_error());
    return false;
}

#ifdef FC_LAYER_WITH_CUDA
bool ok(cudaError_t e, const char *call) {
    if (e == cudaSuccess) return true;
    std::fprintf(stderr, "fc_layer: %s failed: %s\n", call, cudaGetErrorString(e));
    return false;
}
#endif

// ---- Memory -------------------------------------------------------------------------------

enum class memory { host, device };

// One allocation in host or device memory, freed by its destructor: each buffer has one owner.
class buffer {
public:
    buffer() = default;
    buffer(const buffer &) = delete;
    buffer &operator=(const buffer &) = delete;
    ~buffer() { release(); }

    bool allocate(memory where, std::size_t bytes) {
        release();
        where_ = where;
        bytes_ = bytes;
        if (where == memory::host) {
            data_ = std::malloc(bytes);
            if (!data_) std::fprintf(stderr, "fc_layer: malloc of %zu bytes failed\n", bytes);
            return data_ != nullptr;
        }
#ifdef FC_LAYER_WITH_CUDA
        if (ok(cudaMalloc(&data_, bytes), "cudaMalloc")) return true;
#endif
        data_ = nullptr;
        return false;
    }
    void *get() const { return data_; }
    std::size_t bytes() const { return bytes_; }
    memory where() const { return where_; }

private:
    void release() {
#ifdef FC_LAYER_WITH_CUDA
        if (where_ == memory::device) cudaFree(data_);
#endif
        if (where_ == memory::host) std::free(data_);
        data_ = nullptr;
    }
    void *data_ = nullptr;
    std::size_t bytes_ = 0;
    memory where_ = memory::host;
};

// Device copies are enqueued on the library's stream (gemm_get_stream), so that they stay in
// order with the GEMM calls; wait() before the host reads what a copy or a call wrote.
bool copy_bytes(void *dst, const void *src, std::size_t bytes, memory where) {
    if (where == memory::host) {
        std::memcpy(dst, src, bytes);
        return true;
    }
#ifdef FC_LAYER_WITH_CUDA
    return ok(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, static_cast<cudaStream_t>(gemm_get_stream())),
              "cudaMemcpyAsync");
#else
    return false;
#endif
}

bool wait(memory where) {
#ifdef FC_LAYER_WITH_CUDA
    if (where == memory::device)
        return ok(cudaStreamSynchronize(static_cast<cudaStream_t>(gemm_get_stream())), "cudaStreamSynchronize");
#endif
    return where == memory::host;
}

// ---- Element types ----------------------------------------------------------------------------

std::size_t element_size(gemm_dtype_t type) { return type == GEMM_F64 ? 8 : type == GEMM_F32 ? 4 : 2; }

// f64 computes in f64; f32 and bf16 (whose products accumulate in f32) in f32.
gemm_dtype_t compute_type(gemm_dtype_t type) { return type == GEMM_F64 ? GEMM_F64 : GEMM_F32; }

// bf16 is a float's upper 16 bits; rounding to nearest even adds 0x7fff plus the kept lowest bit.
uint16_t bf16_from_float(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    if (std::isnan(f)) return 0x7fc0;
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<uint16_t>(u >> 16);
}

float float_from_bf16(uint16_t h) {
    const uint32_t u = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

void encode_one(double v, gemm_dtype_t type, unsigned char *out) {
    const float f = static_cast<float>(v);
    const uint16_t h = bf16_from_float(f);
    if (type == GEMM_F64) std::memcpy(out, &v, sizeof v);
    else if (type == GEMM_F32) std::memcpy(out, &f, sizeof f);
    else std::memcpy(out, &h, sizeof h);
}

std::vector<unsigned char> encode(const std::vector<double> &values, gemm_dtype_t type) {
    std::vector<unsigned char> bytes(values.size() * element_size(type));
    for (std::size_t i = 0; i < values.size(); ++i) encode_one(values[i], type, &bytes[i * element_size(type)]);
    return bytes;
}

double decode(const unsigned char *p, gemm_dtype_t type) {
    if (type == GEMM_F64) {
        double d;
        std::memcpy(&d, p, sizeof d);
        return d;
    }
    if (type == GEMM_F32) {
        float f;
        std::memcpy(&f, p, sizeof f);
        return double(f);
    }
    uint16_t h;
    std::memcpy(&h, p, sizeof h);
    return double(float_from_bf16(h));
}

// Host values (as doubles) into a buffer of the type, and back.
bool store(const buffer &b, const std::vector<double> &values, gemm_dtype_t type) {
    const std::vector<unsigned char> bytes = encode(values, type);
    return copy_bytes(b.get(), bytes.data(), bytes.size(), b.where()) && wait(b.where());
}

[[maybe_unused]] bool load(const buffer &b, gemm_dtype_t type, std::vector<double> &values) {  // GPU part only
    std::vector<unsigned char> bytes(b.bytes());
    if (!copy_bytes(bytes.data(), b.get(), bytes.size(), b.where()) || !wait(b.where())) return false;
    values.resize(bytes.size() / element_size(type));
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = decode(&bytes[i * element_size(type)], type);
    return true;
}

// alpha and beta point to a value of the compute type.
struct scalar {
    double d;
    float f;
    const void *of(gemm_dtype_t compute) const { return compute == GEMM_F64 ? static_cast<const void *>(&d) : &f; }
};
const scalar one{1.0, 1.0f}, zero{0.0, 0.0f}, minus_one{-1.0, -1.0f};

// ---- The network ------------------------------------------------------------------------------

struct mlp_shape {
    int64_t batch, d_in, hidden, d_out;
};

// The network's tensors, all of one element type in one memory; a gradient is named after what
// L is differentiated by.
struct mlp {
    mlp_shape shape{};
    gemm_dtype_t type = GEMM_F64;
    buffer x, w1, b1, w2, b2, target, ones;  // inputs, parameters, and B ones for db2
    buffer z1, h1, y, dy;                    // forward: Z1 kept for the backward pass; dY = Y - T
    buffer dz1, dw1, db1, dw2, db2, dx;      // backward
};

bool allocate(mlp &net, const mlp_shape &s, gemm_dtype_t type, memory where) {
    net.shape = s;
    net.type = type;
    const auto bytes = [&](int64_t rows, int64_t cols) { return std::size_t(rows * cols) * element_size(type); };
    const std::pair<buffer *, std::size_t> list[] = {
        {&net.x, bytes(s.batch, s.d_in)},     {&net.w1, bytes(s.hidden, s.d_in)},
        {&net.b1, bytes(s.hidden, 1)},        {&net.w2, bytes(s.d_out, s.hidden)},
        {&net.b2, bytes(s.d_out, 1)},         {&net.target, bytes(s.batch, s.d_out)},
        {&net.ones, bytes(s.batch, 1)},       {&net.z1, bytes(s.batch, s.hidden)},
        {&net.h1, bytes(s.batch, s.hidden)},  {&net.y, bytes(s.batch, s.d_out)},
        {&net.dy, bytes(s.batch, s.d_out)},   {&net.dz1, bytes(s.batch, s.hidden)},
        {&net.dw1, bytes(s.hidden, s.d_in)},  {&net.db1, bytes(s.hidden, 1)},
        {&net.dw2, bytes(s.d_out, s.hidden)}, {&net.db2, bytes(s.d_out, 1)},
        {&net.dx, bytes(s.batch, s.d_in)}};
    for (const auto &[b, size] : list)
        if (!b->allocate(where, size)) return false;
    return true;
}

std::size_t count(const mlp &net, const buffer &b) { return b.bytes() / element_size(net.type); }

std::vector<double> uniform(std::mt19937_64 &rng, std::size_t n, double scale) {
    std::uniform_real_distribution<double> dist(-scale, scale);
    std::vector<double> values(n);
    for (double &v : values) v = dist(rng);
    return values;
}

// Every network filled from one seed holds the same values, up to rounding to its type. Values
// lie in [-1, 1], or with fan_in_scaled the weights and biases in +-1/sqrt(fan_in) (as
// PyTorch's nn.Linear starts), which keeps a large network's activations near 1.
bool fill_random(const mlp &net, uint64_t seed, bool fan_in_scaled) {
    std::mt19937_64 rng(seed);
    const double s1 = fan_in_scaled ? 1 / std::sqrt(double(net.shape.d_in)) : 1;
    const double s2 = fan_in_scaled ? 1 / std::sqrt(double(net.shape.hidden)) : 1;
    const gemm_dtype_t t = net.type;
    return store(net.x, uniform(rng, count(net, net.x), 1), t) &&
           store(net.w1, uniform(rng, count(net, net.w1), s1), t) &&
           store(net.b1, uniform(rng, count(net, net.b1), s1), t) &&
           store(net.w2, uniform(rng, count(net, net.w2), s2), t) &&
           store(net.b2, uniform(rng, count(net, net.b2), s2), t) &&
           store(net.target, uniform(rng, count(net, net.target), 1), t) &&
           store(net.ones, std::vector<double>(count(net, net.ones), 1.0), t);
}

gemm_epilogue_t epilogue(gemm_activation_t act, const void *bias, void *bias_grad, void *aux, int64_t ld_aux) {
    gemm_epilogue_t e;
    gemm_epilogue_init(&e);
    e.activation = act;
    e.bias_axis = GEMM_BIAS_COLUMNS;  // one value per column of the row-major [rows, features] result
    e.bias = bias;
    e.bias_grad = bias_grad;
    e.aux = aux;
    e.ld_aux = ld_aux;
    return e;
}

// H1 = act(X W1^T + b1); when training, aux receives Z1 = X W1^T + b1, where the backward pass
// takes act's derivative.
bool layer1_forward(const mlp &net, gemm_activation_t act, bool training) {
    const mlp_shape &s = net.shape;
    const gemm_dtype_t t = net.type, ct = compute_type(t);
    const gemm_epilogue_t e = epilogue(act, net.b1.get(), nullptr, training ? net.z1.get() : nullptr, s.hidden);
    return ok(gemm_ex_epilogue(GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_T, s.batch, s.hidden, s.d_in, one.of(ct), net.x.get(),
                               t, s.d_in, net.w1.get(), t, s.d_in, zero.of(ct), net.h1.get(), t, s.hidden, ct, &e),
              "layer 1 forward (gemm_ex_epilogue)");
}

// Y = H1 W2^T + b2. When training, the loss's gradient dY = Y - T comes out of the same call:
// C starts as a copy of T and beta = -1, so no pass of its own is needed for the subtraction.
bool layer2_forward(const mlp &net, bool training) {
    const mlp_shape &s = net.shape;
    const gemm_dtype_t t = net.type, ct = compute_type(t);
    const buffer &c = training ? net.dy : net.y;
    if (training && !copy_bytes(net.dy.get(), net.target.get(), net.dy.bytes(), net.dy.where())) return false;
    const gemm_epilogue_t e = epilogue(GEMM_ACTIVATION_NONE, net.b2.get(), nullptr, nullptr, 0);
    return ok(gemm_ex_epilogue(GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_T, s.batch, s.d_out, s.hidden, one.of(ct),
                               net.h1.get(), t, s.hidden, net.w2.get(), t, s.hidden,
                               (training ? minus_one : zero).of(ct), c.get(), t, s.d_out, ct, &e),
              "layer 2 forward (gemm_ex_epilogue)");
}

bool forward(const mlp &net, gemm_activation_t act, bool training) {
    return layer1_forward(net, act, training) && layer2_forward(net, training);
}

// dW2 = dY^T H1 and db2 = dY^T 1: the column sums of dY as a product with a vector of ones.
bool layer2_backward(const mlp &net) {
    const mlp_shape &s = net.shape;
    const gemm_dtype_t t = net.type, ct = compute_type(t);
    return ok(gemm_ex(GEMM_ROW_MAJOR, GEMM_OP_T, GEMM_OP_N, s.d_out, s.hidden, s.batch, one.of(ct), net.dy.get(), t,
                      s.d_out, net.h1.get(), t, s.hidden, zero.of(ct), net.dw2.get(), t, s.hidden, ct),
              "dW2 (gemm_ex)") &&
           ok(gemm_ex(GEMM_ROW_MAJOR, GEMM_OP_T, GEMM_OP_N, s.d_out, 1, s.batch, one.of(ct), net.dy.get(), t, s.d_out,
                      net.ones.get(), t, 1, zero.of(ct), net.db2.get(), t, 1, ct),
              "db2 (gemm_ex)");
}

// dZ1 = (dY W2) * act'(Z1) with db1 = the column sums of dZ1 in one call, then dW1 = dZ1^T X
// and dX = dZ1 W1.
bool layer1_backward(const mlp &net, gemm_activation_t act) {
    const mlp_shape &s = net.shape;
    const gemm_dtype_t t = net.type, ct = compute_type(t);
    const gemm_activation_t backward =
        act == GEMM_ACTIVATION_RELU ? GEMM_ACTIVATION_RELU_BACKWARD : GEMM_ACTIVATION_GELU_BACKWARD;
    const gemm_epilogue_t e = epilogue(backward, nullptr, net.db1.get(), net.z1.get(), s.hidden);
    return ok(gemm_ex_epilogue(GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_N, s.batch, s.hidden, s.d_out, one.of(ct),
                               net.dy.get(), t, s.d_out, net.w2.get(), t, s.hidden, zero.of(ct), net.dz1.get(), t,
                               s.hidden, ct, &e),
              "dZ1 and db1 (gemm_ex_epilogue)") &&
           ok(gemm_ex(GEMM_ROW_MAJOR, GEMM_OP_T, GEMM_OP_N, s.hidden, s.d_in, s.batch, one.of(ct), net.dz1.get(), t,
                      s.hidden, net.x.get(), t, s.d_in, zero.of(ct), net.dw1.get(), t, s.d_in, ct),
              "dW1 (gemm_ex)") &&
           ok(gemm_ex(GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_N, s.batch, s.d_in, s.hidden, one.of(ct), net.dz1.get(), t,
                      s.hidden, net.w1.get(), t, s.d_in, zero.of(ct), net.dx.get(), t, s.d_in, ct),
              "dX (gemm_ex)");
}

// One training step's passes (no update of the weights).
bool forward_backward(const mlp &net, gemm_activation_t act) {
    return forward(net, act, true) && layer2_backward(net) && layer1_backward(net, act);
}

const char *name(gemm_activation_t act) { return act == GEMM_ACTIVATION_RELU ? "relu" : "gelu"; }

// ---- 1. Gradient check on the CPU --------------------------------------------------------------

struct gradient {
    const char *name;
    buffer mlp::*value;
    buffer mlp::*grad;
};
const gradient gradients[] = {{"W1", &mlp::w1, &mlp::dw1},
                              {"b1", &mlp::b1, &mlp::db1},
                              {"W2", &mlp::w2, &mlp::dw2},
                              {"b2", &mlp::b2, &mlp::db2},
                              {"X", &mlp::x, &mlp::dx}};

double relative_error(double a, double b) { return std::fabs(a - b) / std::max({std::fabs(a), std::fabs(b), 1e-3}); }

// L for the current values of a host f64 network, through the library's forward pass.
bool loss(const mlp &net, gemm_activation_t act, double &l) {
    if (!forward(net, act, true)) return false;
    const double *dy = static_cast<const double *>(net.dy.get());
    l = 0;
    for (std::size_t i = 0; i < count(net, net.dy); ++i) l += 0.5 * dy[i] * dy[i];
    return true;
}

// The worst relative error between the analytic gradient and central differences of L.
bool check_entries(const mlp &net, gemm_activation_t act, const gradient &g, double &worst) {
    constexpr double eps = 1e-6;
    double *value = static_cast<double *>((net.*g.value).get());
    const double *grad = static_cast<const double *>((net.*g.grad).get());
    worst = 0;
    for (std::size_t i = 0; i < count(net, net.*g.value); ++i) {
        const double saved = value[i];
        double plus = 0, minus = 0;
        value[i] = saved + eps;
        const bool computed = loss(net, act, plus);
        value[i] = saved - eps;
        if (!computed || !loss(net, act, minus)) return false;
        value[i] = saved;
        worst = std::max(worst, relative_error(grad[i], (plus - minus) / (2 * eps)));
    }
    return true;
}

// ReLU's derivative jumps at 0: the check needs every |Z1| well above what eps moves it by.
bool away_from_kinks(const mlp &net, bool &away) {
    if (!forward(net, GEMM_ACTIVATION_RELU, true)) return false;
    const double *z1 = static_cast<const double *>(net.z1.get());
    away = std::all_of(z1, z1 + count(net, net.z1), [](double z) { return std::fabs(z) >= 1e-4; });
    return true;
}

// Fills the host network from the first seed from 1 on whose Z1 keeps clear of ReLU's kink.
bool fill_checkable(const mlp &net, uint64_t &seed) {
    for (seed = 1; seed < 100; ++seed) {
        bool away = false;
        if (!fill_random(net, seed, false) || !away_from_kinks(net, away)) return false;
        if (away) return true;
    }
    std::fprintf(stderr, "fc_layer: no seed below 100 keeps Z1 away from 0\n");
    return false;
}

// Returns false when a call failed; passed says whether every error was within the limit.
bool gradient_check(const mlp &net, gemm_activation_t act, bool &passed) {
    constexpr double limit = 1e-6;
    if (!forward_backward(net, act)) return false;
    for (const gradient &g : gradients) {
        double worst = 0;
        if (!check_entries(net, act, g, worst)) return false;
        passed = passed && worst <= limit;
        std::printf("gradient check %s %-2s: worst relative error %.2e (limit %.0e) %s\n", name(act), g.name, worst,
                    limit, worst <= limit ? "ok" : "FAILED");
    }
    return true;
}

// ---- 2 and 3. Timing ------------------------------------------------------------------------

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

double flops(const mlp_shape &s, bool backward) {
    const double forward = 2.0 * double(s.batch) * double(s.hidden) * double(s.d_in + s.d_out);
    return backward ? 3 * forward : forward;  // the backward pass has two products per forward one
}

// f32 forward+backward on the host, median of 7 rounds of 2 steps.
bool cpu_bench() {
    const mlp_shape s{512, 1024, 2048, 1024};
    mlp net;
    if (!allocate(net, s, GEMM_F32, memory::host) || !fill_random(net, 7, true)) return false;
    if (!forward_backward(net, GEMM_ACTIVATION_GELU)) return false;  // warm-up
    std::vector<double> ms;
    for (int round = 0; round < 7; ++round) {
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < 2; ++i)
            if (!forward_backward(net, GEMM_ACTIVATION_GELU)) return false;
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / 2);
    }
    const double m = median(ms);
    std::printf("cpu f32 B=512 D_in=1024 H=2048 D_out=1024 gelu forward+backward (%s): %.2f ms, %.1f GFLOP/s\n",
                gemm_get_backend(), m, flops(s, true) / m * 1e-6);
    return true;
}

#ifdef FC_LAYER_WITH_CUDA

bool cuda_device_present() {
    int devices = 0;
    return cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
}

// The device network's gradients against the host f64 network's, for one type and activation.
bool gpu_check(const mlp &cpu, gemm_dtype_t type, uint64_t seed, gemm_activation_t act, bool &passed) {
    const double limit = type == GEMM_F64 ? 1e-9 : 1e-4;
    mlp gpu;
    if (!allocate(gpu, cpu.shape, type, memory::device) || !fill_random(gpu, seed, false)) return false;
    if (!forward_backward(cpu, act) || !forward_backward(gpu, act)) return false;
    for (const gradient &g : gradients) {
        std::vector<double> expected, got;
        if (!load(cpu.*g.grad, GEMM_F64, expected) || !load(gpu.*g.grad, type, got)) return false;
        double worst = 0;
        for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, relative_error(got[i], expected[i]));
        passed = passed && worst <= limit;
        std::printf("gpu check %s %s %-2s: worst relative error to the cpu's %.2e (limit %.0e) %s\n",
                    type == GEMM_F64 ? "f64" : "f32", name(act), g.name, worst, limit, worst <= limit ? "ok" : "FAILED");
    }
    return true;
}

// A stream and two events, destroyed with it; the library's calls go to the stream while it lives.
struct timing_stream {
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    bool create() {
        return ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate") &&
               ok(cudaEventCreate(&start), "cudaEventCreate") && ok(cudaEventCreate(&stop), "cudaEventCreate") &&
               ok(gemm_set_stream(stream), "gemm_set_stream");
    }
    ~timing_stream() {
        ok(gemm_set_stream(nullptr), "gemm_set_stream");
        if (start) cudaEventDestroy(start);
        if (stop) cudaEventDestroy(stop);
        if (stream) cudaStreamDestroy(stream);
    }
};

struct timed_way {
    const char *backend;  // nullptr: the default selection
    bool backward;
    std::vector<double> ms;
};

// Ten steps of one way between two events, per step in ms.
bool time_round(const mlp &net, const timing_stream &ts, timed_way &way) {
    if (!ok(gemm_set_backend(way.backend), "gemm_set_backend")) return false;
    const auto step = [&] {
        return way.backward ? forward_backward(net, GEMM_ACTIVATION_GELU) : forward(net, GEMM_ACTIVATION_GELU, false);
    };
    if (!ok(cudaEventRecord(ts.start, ts.stream), "cudaEventRecord")) return false;
    for (int i = 0; i < 10; ++i)
        if (!step()) return false;
    float ms = 0;
    if (!ok(cudaEventRecord(ts.stop, ts.stream), "cudaEventRecord") ||
        !ok(cudaEventSynchronize(ts.stop), "cudaEventSynchronize") ||
        !ok(cudaEventElapsedTime(&ms, ts.start, ts.stop), "cudaEventElapsedTime"))
        return false;
    way.ms.push_back(double(ms) / 10);
    return true;
}

void print_ways(const mlp_shape &s, const timed_way ways[4]) {
    for (bool backward : {false, true}) {
        const double fused = median(ways[backward ? 1 : 0].ms), unfused = median(ways[backward ? 3 : 2].ms);
        std::printf("gpu bf16 gelu %-16s fused %8.3f ms (%6.1f TFLOP/s)  unfused %8.3f ms  unfused/fused %.3f\n",
                    backward ? "forward+backward" : "forward", fused, flops(s, backward) / fused * 1e-9, unfused,
                    unfused / fused);
    }
}

// Fused and unfused results must agree before their times mean anything. bf16 rounds differently
// in cuBLASLt's epilogue than in the library's pass (the pass rounds each product to bf16, 2^-9,
// before the activation and again after it), and db1 sums 4096 such values after every forward
// and backward step before it, so the two differ by a few percent of db1's largest value. The
// check is loose (5 %): it catches a wrong result (a wrong axis, a missing bias), not rounding.
bool fused_agrees_with_unfused(const mlp &net, bool &agrees) {
    std::vector<double> fused, unfused;
    if (!ok(gemm_set_backend(nullptr), "gemm_set_backend") || !forward_backward(net, GEMM_ACTIVATION_GELU) ||
        !load(net.db1, net.type, fused) || !ok(gemm_set_backend("cublas"), "gemm_set_backend") ||
        !forward_backward(net, GEMM_ACTIVATION_GELU) || !load(net.db1, net.type, unfused))
        return false;
    double difference = 0, largest = 0;
    for (std::size_t i = 0; i < fused.size(); ++i) {
        difference = std::max(difference, std::fabs(fused[i] - unfused[i]));
        largest = std::max(largest, std::fabs(unfused[i]));
    }
    agrees = difference <= 5e-2 * largest;
    std::printf("gpu bf16 db1 fused against unfused: largest difference %.2e, largest value %.2e %s\n", difference,
                largest, agrees ? "ok" : "FAILED");
    return true;
}

// After the check, the four ways (fused or unfused, forward or forward+backward) take turns in 7
// rounds after one warm-up round, so that a slow stretch of the device spreads over all of them.
bool gpu_bench(bool &passed) {
    const mlp_shape s{4096, 4096, 14336, 4096};
    timing_stream ts;
    mlp net;
    if (!ts.create() || !allocate(net, s, GEMM_BF16, memory::device) || !fill_random(net, 7, true)) return false;
    timed_way ways[4] = {{nullptr, false, {}}, {nullptr, true, {}}, {"cublas", false, {}}, {"cublas", true, {}}};
    bool agrees = false;
    bool timed = fused_agrees_with_unfused(net, agrees);
    for (int round = 0; round < 8 && timed; ++round)
        for (timed_way &way : ways) timed = timed && time_round(net, ts, way);
    const bool reset = ok(gemm_set_backend(nullptr), "gemm_set_backend");  // back to the default selection
    if (!timed || !reset) return false;
    for (timed_way &way : ways) way.ms.erase(way.ms.begin());  // the warm-up round
    std::printf("gpu bf16 B=%lld D_in=%lld H=%lld D_out=%lld, median of 7 rounds of 10 steps:\n", (long long)s.batch,
                (long long)s.d_in, (long long)s.hidden, (long long)s.d_out);
    print_ways(s, ways);
    passed = passed && agrees;
    return true;
}

bool gpu_part(const mlp &cpu, uint64_t seed, bool bench, bool &passed) {
    if (!cuda_device_present()) {
        std::printf("GPU part skipped: no CUDA device\n");
        return true;
    }
    for (gemm_dtype_t type : {GEMM_F64, GEMM_F32})
        for (gemm_activation_t act : {GEMM_ACTIVATION_RELU, GEMM_ACTIVATION_GELU})
            if (!gpu_check(cpu, type, seed, act, passed)) return false;
    return !bench || gpu_bench(passed);
}

#else

bool gpu_part(const mlp &, uint64_t, bool, bool &) {
    std::printf("GPU part skipped: built without CUDA\n");
    return true;
}

#endif

}  // namespace

int main(int argc, char **argv) {
    const bool bench = argc > 1 && std::strcmp(argv[1], "--bench") == 0;
    const mlp_shape small{5, 7, 6, 3};
    mlp cpu;
    uint64_t seed = 0;
    bool passed = true;
    if (!allocate(cpu, small, GEMM_F64, memory::host) || !fill_checkable(cpu, seed)) return 1;
    std::printf("cpu f64 B=5 D_in=7 H=6 D_out=3, seed %llu, backend selection %s\n", (unsigned long long)seed,
                gemm_get_backend());
    for (gemm_activation_t act : {GEMM_ACTIVATION_RELU, GEMM_ACTIVATION_GELU})
        if (!gradient_check(cpu, act, passed)) return 1;
    if (!gpu_part(cpu, seed, bench, passed)) return 1;
    if (bench && !cpu_bench()) return 1;
    std::printf("%s\n", passed ? "all checks passed" : "some checks FAILED");
    return passed ? 0 : 1;
}
