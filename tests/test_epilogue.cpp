// test_epilogue.cpp: gemm_ex_epilogue on host memory: every activation, bias axis and aux
// choice on every available backend against the double reference (C, aux and bias_grad, with
// padding and guards untouched), over dtypes, layouts, ops, odd and empty sizes, beta = 0 with
// NaN in C and alpha = 0; and its argument errors, each naming the field and computing nothing.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "epilogue_check.hpp"

using namespace gemm_test;

namespace {

struct type_pair {
    gemm_dtype_t ab, c;
};
constexpr type_pair types[] = {
    {GEMM_F32, GEMM_F32}, {GEMM_F64, GEMM_F64}, {GEMM_F16, GEMM_F16}, {GEMM_BF16, GEMM_BF16}, {GEMM_BF16, GEMM_F32}};

struct size3 {
    int64_t m, n, k;
};
constexpr size3 sizes[] = {{7, 13, 5}, {33, 17, 64}, {1, 1, 1}, {19, 3, 0}, {0, 5, 3}, {29, 31, 37}};

constexpr gemm_activation_t activations[] = {GEMM_ACTIVATION_NONE, GEMM_ACTIVATION_RELU, GEMM_ACTIVATION_GELU,
                                             GEMM_ACTIVATION_RELU_BACKWARD, GEMM_ACTIVATION_GELU_BACKWARD};
constexpr gemm_bias_t axes[] = {GEMM_BIAS_NONE, GEMM_BIAS_ROWS, GEMM_BIAS_COLUMNS};

// The cases: every activation x axis x aux x type x layout, each with a size, ops, scalars
// and padding taken in turn, so every value of each meets the others somewhere.
std::vector<epilogue_case> all_cases() {
    std::vector<epilogue_case> cases;
    int turn = 0;
    for (gemm_activation_t act : activations)
        for (gemm_bias_t axis : axes)
            for (int aux = 0; aux < 2; ++aux) {
                bool backward = act == GEMM_ACTIVATION_RELU_BACKWARD || act == GEMM_ACTIVATION_GELU_BACKWARD;
                if (backward && aux == 1) continue;  // a backward activation always reads aux
                for (const type_pair &t : types)
                    for (gemm_layout_t layout : {GEMM_COL_MAJOR, GEMM_ROW_MAJOR}) {
                        ++turn;
                        const size3 s = sizes[turn % 6];
                        const gemm_op_t ta = turn % 3 == 1 ? GEMM_OP_T : GEMM_OP_N;
                        const gemm_op_t tb = turn % 4 == 2 ? GEMM_OP_T : turn % 4 == 3 ? GEMM_OP_C : GEMM_OP_N;
                        const int64_t pad = turn % 2 ? 3 : 0;
                        // beta = 0 (C holds NaN), then beta != 0, and now and then alpha = 0.
                        gemm_case g = make_case(t.ab, t.c, entry::ex, layout, ta, tb, s.m, s.n, s.k, pad,
                                                turn % 7 == 3 ? 0.0 : 1.25, turn % 2 ? 0.0 : 0.5);
                        cases.push_back(make_epilogue_case(g, act, axis, aux == 1, turn % 3 == 0 ? 2 : 0));
                    }
            }
    // Large enough that cpu_omp cuts C into blocks over both threads and k into several
    // blocks: the epilogue must be applied once per element, after the last one.
    for (auto [act, axis, aux, layout] :
         {std::tuple{GEMM_ACTIVATION_GELU, GEMM_BIAS_ROWS, true, GEMM_COL_MAJOR},
          std::tuple{GEMM_ACTIVATION_RELU, GEMM_BIAS_COLUMNS, false, GEMM_ROW_MAJOR},
          std::tuple{GEMM_ACTIVATION_GELU_BACKWARD, GEMM_BIAS_NONE, false, GEMM_COL_MAJOR},
          std::tuple{GEMM_ACTIVATION_RELU_BACKWARD, GEMM_BIAS_COLUMNS, false, GEMM_ROW_MAJOR}}) {
        gemm_case g = make_case(GEMM_F32, GEMM_F32, entry::ex, layout, GEMM_OP_N, GEMM_OP_T, 517, 301, 700, 5, 1.0,
                                layout == GEMM_COL_MAJOR ? 0.0 : 0.5);
        cases.push_back(make_epilogue_case(g, act, axis, aux, 3));
    }
    return cases;
}

}  // namespace

TEST_CASE("epilogue: every activation, bias axis and aux on every backend, against the reference") {
    const std::vector<epilogue_case> cases = all_cases();
    int64_t checked = 0;
    skip_tally skips;
    for (const std::string &name : available_backends()) {
        REQUIRE(gemm_set_backend(name.c_str()) == GEMM_STATUS_SUCCESS);
        for (const epilogue_case &e : cases) {
            if (!case_selected(name + " " + e.describe())) continue;
            const epilogue_operands o = make_epilogue_operands(e);
            for (bool plan : {false, true}) {
                const epilogue_result r = run_epilogue_host(e, o, plan);
                const std::string where = name + (plan ? " plan " : " call ") + e.describe();
                if (r.status == GEMM_STATUS_NOT_SUPPORTED) {  // a type the backend does not take
                    skips.add(name, e.gemm);
                    continue;
                }
                REQUIRE_MESSAGE(r.status == GEMM_STATUS_SUCCESS, where << ": " << r.error);
                const std::string problem = check_epilogue_result(e, o, r);
                CHECK_MESSAGE(problem.empty(), where << ": " << problem);
                ++checked;
            }
        }
    }
    REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
    CHECK(checked >= 2 * int64_t(cases.size()));  // cpu_ref serves every case, by call and by plan
    MESSAGE(checked << " epilogue calls checked; " << skips.summary());
}

namespace {

// Runs GELU and GELU backward over a column of values of type T (Z = values, or ones whose
// slope is taken at aux = values) on every backend and compares each element with the
// definition in double; returns how many (backend, activation) runs were checked.
template <class T> int check_gelu_column(gemm_dtype_t type, const std::vector<T> &values) {
    const int64_t m = int64_t(values.size());
    const std::vector<T> ones(values.size(), T(1));
    const T one = 1, zero = 0;
    int checked = 0;
    for (const std::string &name : available_backends()) {
        REQUIRE(gemm_set_backend(name.c_str()) == GEMM_STATUS_SUCCESS);
        for (gemm_activation_t act : {GEMM_ACTIVATION_GELU, GEMM_ACTIVATION_GELU_BACKWARD}) {
            const bool backward = act == GEMM_ACTIVATION_GELU_BACKWARD;
            std::vector<T> a = backward ? ones : values, aux = values, out(values.size(), T(-7));
            gemm_epilogue_t e;
            gemm_epilogue_init(&e);
            e.activation = act;
            e.aux = backward ? aux.data() : nullptr;
            e.ld_aux = backward ? m : 0;
            const gemm_status_t st = gemm_ex_epilogue(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, m, 1, 1, &one, a.data(),
                                                      type, m, &one, type, 1, &zero, out.data(), type, m, type, &e);
            const std::string where = name + " " + gemm_dtype_name(type) + (backward ? " GELU backward" : " GELU");
            if (st == GEMM_STATUS_NOT_SUPPORTED) continue;  // a backend without epilogues or this type
            REQUIRE_MESSAGE(st == GEMM_STATUS_SUCCESS, where << ": " << gemm_last_error());
            for (std::size_t i = 0; i < values.size(); ++i) {
                const double x = double(values[i]);
                const double want = std::isnan(x) ? x : backward ? detail::gelu_slope(x) : detail::gelu(x);
                if (std::isnan(want)) CHECK_MESSAGE(std::isnan(out[i]), where << " of NaN: " << out[i]);
                else
                    CHECK_MESSAGE(std::fabs(double(out[i]) - want) <= 1e-5 * std::max(1.0, std::fabs(want)),
                                  where << " of " << x << ": " << out[i] << ", want " << want);
            }
            ++checked;
        }
    }
    REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
    return checked;
}

}  // namespace

// A NaN in Z (GELU) or in aux (GELU's slope) gives NaN in that element and the definition's
// value elsewhere, on every backend (the host's tanh takes the bits of its argument apart: a
// NaN's must not make that arithmetic undefined; UBSan runs this in the sanitizer build).
// A large finite value whose cube overflows the type has the saturated slope, 1 or 0, never
// NaN (0 times an infinite cube).
TEST_CASE("epilogue: GELU and its slope of NaN are NaN, of large finite values as defined, every backend") {
    const float nan = std::nanf("");
    const std::vector<float> f32 = {nan,   20.0f,  -20.0f, 0.5f,   -0.5f,   3.0f,     -1.5f,
                                    1e13f, -1e13f, 1e30f,  -1e30f, 3.0e38f, -3.0e38f, nan};
    const std::vector<double> f64 = {std::nan(""), 20.0, -3.0, 1e110, -1e110, 1e200, -1e200, 1.7e308, -1.7e308};
    CHECK(check_gelu_column(GEMM_F32, f32) >= 2);  // cpu_ref takes both
    CHECK(check_gelu_column(GEMM_F64, f64) >= 2);
}

// A forward activation without aux takes any ld_aux (it is not the call's): a backend that
// indexed by it would compute offsets past the int64 range (UBSan runs this in the sanitizer
// build).
TEST_CASE("epilogue: without aux, ld_aux may be anything, every backend") {
    const int64_t m = 7, n = 5, k = 3;
    std::vector<float> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n)), bias(m, 0.25f);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = float(i % 5) - 2;
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = float(i % 3) - 1;
    const float one = 1.0f, zero = 0.0f;
    int checked = 0;
    for (const std::string &name : available_backends()) {
        REQUIRE(gemm_set_backend(name.c_str()) == GEMM_STATUS_SUCCESS);
        gemm_epilogue_t e;
        gemm_epilogue_init(&e);
        e.activation = GEMM_ACTIVATION_RELU;
        e.bias_axis = GEMM_BIAS_ROWS;
        e.bias = bias.data();
        e.ld_aux = int64_t(3) << 60;
        std::vector<float> c(static_cast<std::size_t>(m * n), std::nanf(""));
        const gemm_status_t st =
            gemm_ex_epilogue(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, m, n, k, &one, a.data(), GEMM_F32, m, b.data(),
                             GEMM_F32, k, &zero, c.data(), GEMM_F32, m, GEMM_F32, &e);
        if (st == GEMM_STATUS_NOT_SUPPORTED) continue;
        REQUIRE_MESSAGE(st == GEMM_STATUS_SUCCESS, name << ": " << gemm_last_error());
        for (int64_t j = 0; j < n; ++j)
            for (int64_t i = 0; i < m; ++i) {
                float z = 0.25f;
                for (int64_t l = 0; l < k; ++l) z += a[std::size_t(i + l * m)] * b[std::size_t(l + j * k)];
                CHECK_MESSAGE(c[std::size_t(i + j * m)] == std::max(z, 0.0f), name << ": C(" << i << "," << j << ")");
            }
        ++checked;
    }
    REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
    CHECK(checked >= 1);  // cpu_ref
}

// The checker itself: a C off by a little more than its tolerance, or an aux never written,
// is caught (a check that cannot fail proves nothing).
TEST_CASE("epilogue: the check catches a wrong C, an unwritten aux and a wrong bias gradient") {
    REQUIRE(gemm_set_backend("cpu_ref") == GEMM_STATUS_SUCCESS);
    gemm_case g = make_case(GEMM_F32, GEMM_F32, entry::ex, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 9, 7, 5, 0, 1.0, 0.0);
    epilogue_case fwd = make_epilogue_case(g, GEMM_ACTIVATION_GELU, GEMM_BIAS_ROWS, true, 1);
    epilogue_operands o = make_epilogue_operands(fwd);
    epilogue_result r = run_epilogue_host(fwd, o);
    REQUIRE(r.status == GEMM_STATUS_SUCCESS);
    CHECK(check_epilogue_result(fwd, o, r).empty());
    epilogue_result bad = r;
    store(bad.c.data(), 3, GEMM_F32, load(bad.c.data(), 3, GEMM_F32) + 1e-3);
    CHECK(check_epilogue_result(fwd, o, bad).find("C(3,0)") == 0);
    bad = r;
    bad.aux = o.aux0;
    CHECK(check_epilogue_result(fwd, o, bad).find("aux(0,0)") == 0);
    bad = r;
    store(bad.c.data(), fwd.gemm.ldc * 7, GEMM_F32, 1.0);  // the guard after C
    CHECK(check_epilogue_result(fwd, o, bad).find("outside what the call writes") != std::string::npos);

    epilogue_case bwd = make_epilogue_case(g, GEMM_ACTIVATION_RELU_BACKWARD, GEMM_BIAS_COLUMNS, false, 0);
    o = make_epilogue_operands(bwd);
    r = run_epilogue_host(bwd, o);
    REQUIRE(r.status == GEMM_STATUS_SUCCESS);
    CHECK(check_epilogue_result(bwd, o, r).empty());
    bad = r;
    store(bad.bias_grad.data(), 2, GEMM_F32, load(bad.bias_grad.data(), 2, GEMM_F32) + 1e-3);
    CHECK(check_epilogue_result(bwd, o, bad).find("bias_grad[2]") == 0);
    REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
}

namespace {

// A call with one field of a valid forward GELU + row bias + aux epilogue changed: its status,
// the start of its message, and C, aux and the bias as they were.
struct error_probe {
    gemm_case g = make_case(GEMM_F32, GEMM_F32, entry::ex, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 6, 5, 4, 0, 1.0, 0.5);
    bytes a, b, c, aux, bias, grad;
    error_probe() {
        a.assign(6 * 4 * 4, 1);
        b.assign(4 * 5 * 4, 1);
        c.assign(6 * 5 * 4, 0);
        aux.assign(6 * 5 * 4, 0);
        bias.assign(6 * 4, 0);
        grad.assign(6 * 4, 0);
    }
    gemm_epilogue_t valid() {
        gemm_epilogue_t e;
        gemm_epilogue_init(&e);
        e.activation = GEMM_ACTIVATION_GELU;
        e.bias_axis = GEMM_BIAS_ROWS;
        e.bias = bias.data();
        e.aux = aux.data();
        e.ld_aux = 6;
        return e;
    }
    void expect(const gemm_epilogue_t *e, gemm_status_t want, const std::string &prefix, void *C = nullptr) {
        const bytes c0 = c, aux0 = aux, grad0 = grad;
        const float alpha = 1, beta = 0.5f;
        gemm_status_t got =
            gemm_ex_epilogue(g.layout, g.transa, g.transb, g.m, g.n, g.k, &alpha, a.data(), GEMM_F32, g.lda, b.data(),
                             GEMM_F32, g.ldb, &beta, C ? C : c.data(), GEMM_F32, g.ldc, GEMM_F32, e);
        const std::string message = gemm_last_error();
        CHECK_MESSAGE(got == want, "status " << int(got) << ", expected " << int(want) << ": " << message);
        CHECK_MESSAGE(message.rfind(prefix, 0) == 0,
                      "message \"" << message << "\" should start with \"" << prefix << "\"");
        CHECK(c == c0);
        CHECK(aux == aux0);
        CHECK(grad == grad0);
    }
};

}  // namespace

TEST_CASE("epilogue errors: each names the field, and nothing is computed") {
    error_probe p;
    gemm_epilogue_t e = p.valid();
    p.expect(&e, GEMM_STATUS_SUCCESS, "");
    p.c.assign(p.c.size(), 0);
    p.aux.assign(p.aux.size(), 0);

    p.expect(nullptr, GEMM_STATUS_INVALID_POINTER, "parameter 19: epilogue is NULL");
    e = p.valid();
    e.struct_size = 8;
    p.expect(&e, GEMM_STATUS_INVALID_VALUE, "parameter 19: epilogue->struct_size = 8 is smaller");
    e = p.valid();
    // Values within the enums' ranges (so C++ may hold them) that name no enumerator.
    e.activation = static_cast<gemm_activation_t>(7);
    p.expect(&e, GEMM_STATUS_INVALID_VALUE, "parameter 19: epilogue->activation = 7 is not a gemm_activation_t");
    e = p.valid();
    e.bias_axis = static_cast<gemm_bias_t>(3);
    p.expect(&e, GEMM_STATUS_INVALID_VALUE, "parameter 19: epilogue->bias_axis = 3 is not a gemm_bias_t");
    e = p.valid();
    e.bias = nullptr;
    p.expect(&e, GEMM_STATUS_INVALID_POINTER, "parameter 19: epilogue->bias is NULL but bias_axis is GEMM_BIAS_ROWS");
    e = p.valid();
    e.bias_axis = GEMM_BIAS_NONE;
    p.expect(&e, GEMM_STATUS_INVALID_VALUE, "parameter 19: epilogue->bias is set but bias_axis is GEMM_BIAS_NONE");
    e = p.valid();
    e.bias_grad = p.grad.data();
    p.expect(&e, GEMM_STATUS_INVALID_VALUE, "parameter 19: epilogue->bias_grad must be NULL for a forward activation");
    e = p.valid();
    e.activation = GEMM_ACTIVATION_GELU_BACKWARD;
    p.expect(&e, GEMM_STATUS_INVALID_VALUE, "parameter 19: epilogue->bias must be NULL for a backward activation");
    e = p.valid();
    e.activation = GEMM_ACTIVATION_RELU_BACKWARD;
    e.bias = nullptr;
    e.bias_grad = p.grad.data();
    e.aux = nullptr;
    p.expect(&e, GEMM_STATUS_INVALID_POINTER, "parameter 19: epilogue->aux is NULL");
    e.aux = p.aux.data();
    e.bias_grad = nullptr;
    p.expect(&e, GEMM_STATUS_INVALID_POINTER,
             "parameter 19: epilogue->bias_grad is NULL but bias_axis is GEMM_BIAS_ROWS");
    e = p.valid();
    e.ld_aux = 5;
    p.expect(&e, GEMM_STATUS_INVALID_LEADING_DIM, "parameter 19: epilogue->ld_aux = 5 must be >= max(1, m = 6)");
    e = p.valid();
    e.aux = p.c.data() + 8;
    p.expect(&e, GEMM_STATUS_INVALID_VALUE, "parameter 19: epilogue->aux and C overlap");
    e = p.valid();
    e.bias = p.aux.data() + 4;
    p.expect(&e, GEMM_STATUS_INVALID_VALUE, "parameter 19: epilogue->bias and epilogue->aux overlap");
    // An operand that cannot exist is named before any overlap (which is judged on the spans).
    e = p.valid();
    e.aux = p.c.data() + 8;
    p.g.k = p.g.ldb = INT64_MAX / 4;
    p.expect(&e, GEMM_STATUS_INVALID_SIZE, "parameter 6: k = 2305843009213693951 makes A span more than 2^63 - 1");
    p.g.k = p.g.ldb = 4;
    // aux's span is aux's own: a huge ld_aux is named, not the size that counts aux's lines.
    e = p.valid();
    e.ld_aux = INT64_MAX;
    p.expect(&e, GEMM_STATUS_INVALID_SIZE,
             "parameter 19: epilogue->ld_aux = 9223372036854775807 makes epilogue->aux span more than 2^63 - 1");
    CHECK(gemm_last_error_parameter() == 19);

    // Complex types take no epilogue; a forward activation needs no aux; m = 0 needs no bias.
    const float one[2] = {1, 0};
    e = p.valid();
    gemm_status_t s = gemm_ex_epilogue(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 2, 2, 2, one, p.a.data(), GEMM_C32, 2,
                                       p.b.data(), GEMM_C32, 2, one, p.c.data(), GEMM_C32, 2, GEMM_C32, &e);
    CHECK(s == GEMM_STATUS_NOT_SUPPORTED);
    CHECK(std::string(gemm_last_error()).find("epilogues take real types") != std::string::npos);
    e = p.valid();
    e.aux = nullptr;
    p.expect(&e, GEMM_STATUS_SUCCESS, "");
    p.g.m = 0;
    e = p.valid();
    e.bias = nullptr;
    p.expect(&e, GEMM_STATUS_SUCCESS, "");
}

TEST_CASE("epilogue plans: the desc's epilogue, and runs that do not match it refused") {
    error_probe p;
    gemm_desc_t d;
    gemm_desc_init(&d, GEMM_F32, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 6, 5, 4);
    d.activation = GEMM_ACTIVATION_GELU;
    d.bias_axis = GEMM_BIAS_ROWS;
    d.aux = 1;
    gemm_plan_t plan = nullptr;
    REQUIRE(gemm_plan_create(&d, &plan) == GEMM_STATUS_SUCCESS);
    const float alpha = 1, beta = 0.5f;
    auto run = [&](const gemm_epilogue_t *e) {
        return gemm_plan_run_epilogue(plan, &alpha, p.a.data(), p.b.data(), &beta, p.c.data(), e);
    };
    gemm_epilogue_t e = p.valid();
    CHECK(run(&e) == GEMM_STATUS_SUCCESS);
    const bytes c0 = p.c, aux0 = p.aux;
    auto refused = [&](gemm_status_t got, gemm_status_t want, const std::string &prefix) {
        const std::string message = gemm_last_error();
        CHECK(got == want);
        CHECK_MESSAGE(message.rfind(prefix, 0) == 0,
                      "message \"" << message << "\" should start with \"" << prefix << "\"");
        CHECK(p.c == c0);
        CHECK(p.aux == aux0);
    };
    refused(gemm_plan_run(plan, &alpha, p.a.data(), p.b.data(), &beta, p.c.data()), GEMM_STATUS_INVALID_VALUE,
            "parameter 1: the plan was made with an epilogue");
    refused(run(nullptr), GEMM_STATUS_INVALID_POINTER, "parameter 7: epilogue is NULL");
    e.activation = GEMM_ACTIVATION_RELU;
    refused(run(&e), GEMM_STATUS_INVALID_VALUE,
            "parameter 7: epilogue->activation = 1 but the plan was made for GEMM_ACTIVATION_GELU");
    e = p.valid();
    e.aux = nullptr;
    refused(run(&e), GEMM_STATUS_INVALID_VALUE, "parameter 7: epilogue->aux is NULL but the plan was made with one");
    e = p.valid();
    e.ld_aux = 8;
    refused(run(&e), GEMM_STATUS_INVALID_VALUE, "parameter 7: epilogue->ld_aux = 8 but the plan was made for 6");
    e = p.valid();
    e.bias = nullptr;
    refused(run(&e), GEMM_STATUS_INVALID_POINTER, "parameter 7: epilogue->bias is NULL");
    e = p.valid();
    e.aux = p.c.data();
    refused(run(&e), GEMM_STATUS_INVALID_VALUE, "parameter 7: epilogue->aux and C overlap");
    gemm_plan_destroy(plan);

    // A plan without an epilogue takes only one that adds nothing; a desc's epilogue is
    // checked at creation.
    gemm_desc_init(&d, GEMM_F32, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 6, 5, 4);
    REQUIRE(gemm_plan_create(&d, &plan) == GEMM_STATUS_SUCCESS);
    e = p.valid();
    refused(run(&e), GEMM_STATUS_INVALID_VALUE,
            "parameter 7: epilogue->activation = 2 but the plan was made for GEMM_ACTIVATION_NONE");
    gemm_epilogue_init(&e);
    CHECK(run(&e) == GEMM_STATUS_SUCCESS);
    gemm_plan_destroy(plan);
    d.activation = static_cast<gemm_activation_t>(7);
    CHECK(gemm_plan_create(&d, &plan) == GEMM_STATUS_INVALID_VALUE);
    CHECK(std::string(gemm_last_error()).rfind("gemm_desc_t: activation = 7 is not a gemm_activation_t", 0) == 0);
    d.activation = GEMM_ACTIVATION_GELU;
    d.aux = 1;
    d.ld_aux = 3;
    CHECK(gemm_plan_create(&d, &plan) == GEMM_STATUS_INVALID_LEADING_DIM);
    CHECK(std::string(gemm_last_error()).rfind("gemm_desc_t: ld_aux = 3 must be >= max(1, m = 6)", 0) == 0);
}

// A desc has no operands: its epilogue's pointers are the library's placeholders, whose
// places say nothing, so a desc of any size with an epilogue is judged on its spans alone.
TEST_CASE("epilogue plans: a desc too large for placeholders apart is accepted") {
    gemm_desc_t d;
    gemm_desc_init(&d, GEMM_F32, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, int64_t(1) << 20, int64_t(1) << 20, 64);
    struct epilogue_kind {
        gemm_activation_t act;
        gemm_bias_t axis;
        int aux;
    };
    for (const epilogue_kind &kind : {epilogue_kind{GEMM_ACTIVATION_RELU, GEMM_BIAS_ROWS, 0},
                                      epilogue_kind{GEMM_ACTIVATION_GELU, GEMM_BIAS_COLUMNS, 1},
                                      epilogue_kind{GEMM_ACTIVATION_RELU_BACKWARD, GEMM_BIAS_ROWS, 0}}) {
        d.activation = kind.act;
        d.bias_axis = kind.axis;
        d.aux = kind.aux;
        INFO("activation " << kind.act << ", bias_axis " << kind.axis << ", aux " << kind.aux);
        CHECK_MESSAGE(gemm_backend_supports("cpu_ref", &d) == GEMM_STATUS_SUCCESS, gemm_last_error());
        REQUIRE(gemm_set_backend("cpu_ref") == GEMM_STATUS_SUCCESS);
        gemm_plan_t plan = nullptr;
        CHECK_MESSAGE(gemm_plan_create(&d, &plan) == GEMM_STATUS_SUCCESS, gemm_last_error());
        REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
        gemm_plan_destroy(plan);
    }
}

// ---- the trace says where the epilogue ran: one process with GEMM_VERBOSE=1 ----------------

TEST_SUITE("env_verbose1" * doctest::skip()) {
    TEST_CASE("epilogue trace: fused on cpu_ref and cpu_omp, the library's pass after cblas and for cpu_omp's bias "
              "gradient") {
        gemm_case g =
            make_case(GEMM_F32, GEMM_F32, entry::ex, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_T, 5, 6, 7, 0, 1.0, 0.0);
        struct expectation {
            const char *backend;
            gemm_activation_t act;
            const char *trace;
        };
        // The axis as the row-major caller named it (the canonical problem's rows).
        const expectation cases[] = {
            {"cpu_ref", GEMM_ACTIVATION_GELU, " epilogue=gelu+bias(columns)+aux:fused"},
            {"cpu_omp", GEMM_ACTIVATION_GELU, " epilogue=gelu+bias(columns)+aux:fused"},
            {"cblas", GEMM_ACTIVATION_GELU, " epilogue=gelu+bias(columns)+aux:pass"},
            {"cpu_omp", GEMM_ACTIVATION_GELU_BACKWARD, " epilogue=gelu_backward+bias_grad(columns):pass"}};
        for (const expectation &x : cases) {
            if (gemm_set_backend(x.backend) != GEMM_STATUS_SUCCESS) continue;  // cblas may be missing
            const epilogue_case e = make_epilogue_case(g, x.act, GEMM_BIAS_COLUMNS, x.act == GEMM_ACTIVATION_GELU, 0);
            const epilogue_operands o = make_epilogue_operands(e);
            std::vector<std::string> lines;
            {
                stderr_capture capture;
                CHECK(run_epilogue_host(e, o).status == GEMM_STATUS_SUCCESS);
                lines = capture.lines();
            }
            REQUIRE(lines.size() == 1);
            INFO("trace: " << lines[0]);
            CHECK(lines[0].find(std::string("backend=") + x.backend) != std::string::npos);
            CHECK(lines[0].find(x.trace) != std::string::npos);
        }
        REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
    }
}

// ---- auto's tune cache serves epilogue calls: one process with its own cache file ----------

TEST_SUITE("env_tuned" * doctest::skip()) {
    TEST_CASE("epilogue tuned: gemm_tune_key stores the class with its epilogue, and auto's next call hits it") {
        const char *path = std::getenv("GEMM_TUNE_CACHE");
        REQUIRE(path);
        std::remove(path);
        gemm_case g =
            make_case(GEMM_F32, GEMM_F32, entry::ex, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_T, 24, 32, 16, 0, 1.0, 0.0);
        const epilogue_case e = make_epilogue_case(g, GEMM_ACTIVATION_RELU, GEMM_BIAS_COLUMNS, true, 0);
        // The canonical class: row-major m x n is column-major n x m, the bias along its rows.
        const char *key =
            "f32 f32 TN 32 24 16 batch=1 ld=tight align=16 space=host beta=0 epilogue=relu+bias(rows)+aux";
        gemm_tune_report_t report;
        const std::string tuned = tune_key_as_only_entry(key, "cpu_omp,cblas", report);
        REQUIRE_MESSAGE(tuned.empty(), tuned);
        const epilogue_operands o = make_epilogue_operands(e);
        std::vector<std::string> lines;
        epilogue_result r;
        {
            stderr_capture capture;
            r = run_epilogue_host(e, o);
            lines = capture.lines();
        }
        REQUIRE(r.status == GEMM_STATUS_SUCCESS);
        CHECK(check_epilogue_result(e, o, r).empty());
        REQUIRE(lines.size() == 1);
        INFO("trace: " << lines[0]);
        CHECK(lines[0].find("why=\"auto: tune cache hit\"") != std::string::npos);
        CHECK(lines[0].find(std::string("backend=") + report.backend) != std::string::npos);
        // Keys that name no epilogue the library has are refused.
        CHECK(
            gemm_tune_key("f32 f32 NN 8 8 8 batch=1 ld=tight align=16 space=host beta=0 epilogue=relu+bias_grad(rows)",
                          -1, 20, nullptr, 0, &report) == GEMM_STATUS_INVALID_VALUE);
        CHECK(gemm_tune_key("c32 c32 NN 8 8 8 batch=1 ld=tight align=16 space=host beta=0 epilogue=relu", -1, 20,
                            nullptr, 0, &report) == GEMM_STATUS_INVALID_VALUE);
        std::remove(path);
    }
}
