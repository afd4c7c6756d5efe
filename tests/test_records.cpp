// Records: validation against the knob spaces (unknown knob, illegal value),
// staleness, deterministic files, target classes.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <map>
#include <fstream>
#include <sstream>

#include "build_info.h"
#include "call_json.h"
#include "candidates.h"
#include "distill.h"
#include "journal.h"
#include "journal_suite.h"
#include "records.h"
#include "suite.h"
#include "trials.h"

using namespace gradtune;

namespace {

Record sample_record() {
    Record r;
    r.op = "DepthwiseConv2dNativeBackpropInput";
    r.structure = {"float32", "NHWC",
                   {{"depth_multiplier", 1}, {"dilation_height", 1}, {"dilation_width", 1},
                    {"filter_height", 3}, {"filter_width", 3}, {"stride", 1}}};
    r.padding = "SAME";
    r.shape = {{"N", 1}, {"H", 112}, {"W", 112}, {"C", 32}};
    r.knobs = find_op(r.op)->space(Device::cpu, r.structure).defaults();
    r.knob_space_version = find_op(r.op)->knob_space_version;  // as the tuner writes it
    r.median_ms = 0.25;
    r.generic_median_ms = 0.5;
    r.target = "x86-64-linux-avx2-user_context";
    r.halide_version = "21.0.0";
    r.source_hash = "abc";
    return r;
}

std::string temp_file(const std::string &name) {
    return (std::filesystem::temp_directory_path() / ("gradtune_test_" + name)).string();
}

std::string slurp(const std::string &path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// An ok trial of `base`'s op and structure on this build's CPU target, as
// the tuner logs one (shape, knobs and times left to the test).
tooling::Trial ok_trial_like(const Record &base) {
    const tooling::BuildInfo &info = tooling::build_info();
    tooling::Trial t;
    t.op = base.op;
    t.structure = base.structure;
    t.padding = "SAME";
    t.target = info.target(Device::cpu);
    t.halide_version = info.halide_version;
    t.knob_space_version = find_op(base.op)->knob_space_version;
    t.status = tooling::TrialStatus::ok;
    return t;
}

}  // namespace

TEST_CASE("a record file round-trips and is written byte for byte the same", "[records]") {
    RecordFile f{"DepthwiseConv2dNativeBackpropInput", "x86-64-linux-avx2", {sample_record()}};
    Record second = sample_record();
    second.shape["N"] = 32;
    f.records.insert(f.records.begin(), second);  // out of order on purpose
    const std::string a = temp_file("a.json"), b = temp_file("b.json");
    write_record_file(a, f);
    RecordFile back = read_record_file(a);
    REQUIRE(back.records.size() == 2);
    CHECK(back.records[0].shape.at("N") == 1);  // sorted
    write_record_file(b, back);
    CHECK(slurp(a) == slurp(b));
}

TEST_CASE("a record with an unknown knob or an illegal value is refused, naming file and knob", "[records]") {
    const std::string path = temp_file("bad.json");
    auto write_with = [&](const Record &r) {
        RecordFile f{r.op, "x86-64-linux-avx2", {r}};
        write_record_file(path, f);
    };
    Record unknown = sample_record();
    unknown.knobs["warp_speed"] = 9;
    write_with(unknown);
    try {
        read_record_file(path);
        FAIL("accepted an unknown knob");
    } catch (const std::runtime_error &e) {
        CHECK(std::string(e.what()).find(path) != std::string::npos);
        CHECK(std::string(e.what()).find("unknown knob 'warp_speed'") != std::string::npos);
    }
    Record illegal = sample_record();
    illegal.knobs["tile_y"] = 5;
    write_with(illegal);
    CHECK_THROWS_WITH(read_record_file(path), Catch::Contains("illegal value 5 for knob 'tile_y'"));
    Record combination = sample_record();
    combination.knobs["unroll_taps"] = 1;
    combination.structure.fixed["filter_height"] = 0;  // unrolling needs a fixed filter
    combination.structure.fixed["filter_width"] = 0;
    write_with(combination);
    CHECK_THROWS_WITH(read_record_file(path), Catch::Contains("unroll_taps"));
}

TEST_CASE("a record is valid while its Halide and knob-space versions hold, sources are provenance", "[records]") {
    Record r = sample_record();
    CHECK(staleness(r, "21.0.0").empty());
    CHECK(staleness(r, "22.0.0").find("Halide") != std::string::npos);
    r.source_hash = "tuned on sources long since refactored";
    r.target = "x86-64-linux-avx512_zen5-user_context";  // another machine: provenance too
    CHECK(staleness(r, "21.0.0").empty());
    r.knob_space_version = find_op(r.op)->knob_space_version + 1;
    CHECK(staleness(r, "21.0.0").find("knob-space version") != std::string::npos);
}

TEST_CASE("a record file without knob_space_version reads as version 1", "[records]") {
    // A FractionalAvgPoolGrad record of version 1 has no divide_by_reciprocal
    // (added by version 2). Without the version field it must read as
    // version 1, upgraded: the knob gets its default (as of any later
    // version it would be refused as incomplete).
    const std::string path = temp_file("old.json");
    Record r;
    r.op = "FractionalAvgPoolGrad";
    r.structure = {"float32", "NHWC", {{"overlapping", 1}}};
    r.padding = "VALID";
    r.shape = {{"N", 1}, {"H", 56}, {"W", 56}, {"C", 128}, {"OH", 39}, {"OW", 39}};
    r.knobs = find_op(r.op)->space(Device::cpu, r.structure).defaults();
    REQUIRE(r.knobs.erase("divide_by_reciprocal") == 1);
    r.knob_space_version = 1;
    r.halide_version = "21.0.0";
    write_record_file(path, RecordFile{r.op, "x86-64-linux-avx2", {r}});
    std::string text = slurp(path);
    const std::string field = "\"knob_space_version\":1,";
    REQUIRE(text.find(field) != std::string::npos);
    text.erase(text.find(field), field.size());
    std::ofstream(path) << text;
    const Record back = read_record_file(path).records.at(0);
    CHECK(back.knob_space_version == find_op(r.op)->knob_space_version);
    CHECK(back.knobs.at("divide_by_reciprocal") == 0);
}

TEST_CASE("class distance: own class, then same vendor and ISA level, then same ISA level", "[records]") {
    const std::string spr = "x86-64-linux-avx512_sapphirerapids", zen5 = "x86-64-linux-avx512_zen5";
    CHECK(class_distance(spr, spr) == 0);
    CHECK(class_distance("x86-64-linux-avx512_skylake", spr) == 1);
    CHECK(class_distance("x86-64-linux-avx512_zen4", zen5) == 1);
    CHECK(class_distance(zen5, spr) == 2);
    CHECK(class_distance("x86-64-linux-avx2", spr) == 3);
    CHECK(class_distance("arm-64-linux-sve2", spr) == 4);
}

TEST_CASE("structure defaults round-trip and are validated like records", "[records]") {
    const std::string dir = temp_file("defaults");
    std::filesystem::remove_all(dir);
    const Record r = sample_record();
    StructureDefault d{r.op, Device::cpu, r.structure, r.knobs, 1, "21.0.0", "test", 1.1, "x86-64-linux-avx2"};
    write_structure_defaults(dir, r.op, {d});
    std::vector<StructureDefault> back = read_structure_defaults(dir);
    REQUIRE(back.size() == 1);
    CHECK(back[0].knobs == d.knobs);
    CHECK(back[0].structure == d.structure);
    CHECK(staleness(back[0], "21.0.0").empty());
    CHECK(back[0].avx2.knobs.empty());
    // An AVX2 setting (distilled from trials on the AVX2 target) travels
    // with the default and is validated like its knobs.
    Knobs avx2 = find_op(r.op)->space(Device::cpu, r.structure).defaults();
    d.avx2 = {avx2, "test on avx2", 1.2, "x86-64-linux-avx2"};
    write_structure_defaults(dir, r.op, {d});
    back = read_structure_defaults(dir);
    REQUIRE(back.size() == 1);
    CHECK(back[0].knobs == d.knobs);
    CHECK(back[0].avx2.knobs == avx2);
    CHECK(back[0].avx2.measured_on == "x86-64-linux-avx2");
    d.avx2.knobs["warp_speed"] = 9;
    write_structure_defaults(dir, r.op, {d});
    CHECK_THROWS_WITH(read_structure_defaults(dir), Catch::Contains("(avx2)") && Catch::Contains("'warp_speed'"));
    d.avx2 = {};
    d.knobs["warp_speed"] = 9;
    write_structure_defaults(dir, r.op, {d});
    CHECK_THROWS_WITH(read_structure_defaults(dir), Catch::Contains("unknown knob 'warp_speed'"));
    std::filesystem::remove_all(dir);
}

TEST_CASE("target classes", "[records]") {
    CHECK(target_class("x86-64-linux-tune_znver5-avx-avx2-avx512-avx512_zen5-fma-user_context") ==
          "x86-64-linux-avx512_zen5");
    CHECK(target_class("x86-64-linux-avx-avx2-fma-sse41") == "x86-64-linux-avx2");
    CHECK(target_class("arm-64-linux") == "arm-64-linux");
}

TEST_CASE("a record of an older knob-space version reads with the knobs added since at their defaults", "[records]") {
    // An op whose version 2 added a knob (default 0: what version 1 did) and
    // whose version 3 kept both knobs' meanings: records of versions 1 and 2
    // upgrade; raising compatible_since makes version 1 stale.
    OpSchema op;
    op.name = "Synthetic";
    op.knob_space_version = 3;
    op.space = [](Device, const Structure &) {
        KnobSpace space;
        space.knobs = {{"tile", {1, 2, 4}, 2, "an old knob"}, {"added", {0, 1}, 0, "added in version 2", 2}};
        return space;
    };
    const Structure structure{"float32", "NHWC", {}};
    Knobs knobs = {{"tile", 4}};
    int version = 1;
    CHECK(op.upgrade(Device::cpu, structure, &version, &knobs).empty());
    CHECK(version == 3);
    CHECK(knobs == Knobs{{"tile", 4}, {"added", 0}});
    knobs = {{"tile", 4}, {"added", 1}};
    version = 2;
    CHECK(op.upgrade(Device::cpu, structure, &version, &knobs).empty());
    CHECK(knobs.at("added") == 1);  // a value the record chose is kept
    op.compatible_since = 2;
    knobs = {{"tile", 4}};
    version = 1;
    CHECK(op.upgrade(Device::cpu, structure, &version, &knobs).find("compatible since 2") != std::string::npos);
    CHECK(version == 1);
    version = 4;  // from a newer build
    CHECK(!op.upgrade(Device::cpu, structure, &version, &knobs).empty());
}

// kSamples settings from a sampler of `space` (random ones and moves from
// the defaults), each required legal and canonical and then shown to
// `check`; returns how many have algorithm=1.
constexpr int kSamples = 400;
int sample_settings(const KnobSpace &space, uint64_t seed, const std::function<void(const Knobs &)> &check) {
    tooling::Sampler sampler(space, seed);
    int second_algorithm = 0;
    for (int i = 0; i < kSamples; i++) {
        const Knobs k = i % 2 ? sampler.random() : sampler.mutate(space.defaults());
        INFO(knobs_text(k));
        REQUIRE(space.check(k).empty());
        CHECK(space.canonical(k) == k);
        check(k);
        second_algorithm += k.at("algorithm") == 1;
    }
    return second_algorithm;
}

TEST_CASE("the sampler only proposes canonical settings: no knob an algorithm ignores strays from its default",
          "[records][tuner]") {
    // Conv2DBackpropInput's dot algorithm reads neither the direct
    // algorithm's packing nor its channel blocking; a setting that differs
    // only there would compile the same code twice.
    const OpSchema *op = find_op("Conv2DBackpropInput");
    const Structure stem{"float32", "NHWC",
                         {{"dilation_height", 1}, {"dilation_width", 1}, {"filter_height", 7}, {"filter_width", 7},
                          {"groups", 1}, {"stride_height", 2}, {"stride_width", 2}}};
    const KnobSpace space = op->space(Device::cpu, stem);
    const Knobs defaults = space.defaults();
    const int dot = sample_settings(space, 7, [&](const Knobs &k) {
        if (k.at("algorithm") == 1) {
            CHECK(k.at("pack_filter") == defaults.at("pack_filter"));
            CHECK(k.at("channel_block") == defaults.at("channel_block"));
        } else {
            CHECK(k.at("tile_channels") == 1);
            CHECK(k.at("channels_per_task") == 0);
        }
    });
    CHECK(dot > 20);
    CHECK(kSamples - dot > 20);
    // The dot algorithm is for ungrouped variants only.
    Structure grouped = stem;
    grouped.fixed["groups"] = 0;
    Knobs k = space.canonical([&] {
        Knobs d = defaults;
        d["algorithm"] = 1;
        return d;
    }());
    CHECK(space.check(k).empty());
    CHECK(op->space(Device::cpu, grouped).check(k).find("groups=1") != std::string::npos);
    // A tile of exactly one row per tap phase in one-tile tasks does not
    // compile (Halide cannot unroll the guarded phase loop): refused up
    // front, not left for the tuner to fail on.
    Knobs phase_rows = k;
    phase_rows["tile_y"] = 2;
    phase_rows["rows_per_task"] = 1;
    CHECK(space.check(phase_rows).find("rows_per_task > 1") != std::string::npos);
    phase_rows["rows_per_task"] = 2;
    CHECK(space.check(phase_rows).empty());
    // The tuner starts each ungrouped group from both algorithms: the seeds
    // of the dot algorithm (for large images, and for small ones with
    // several images per task) and of the direct one's few-channel tile are
    // legal settings of them; a grouped space has no dot seed.
    REQUIRE(space.algorithm_seeds.size() == 3);
    CHECK(space.algorithm_seeds[0].at("algorithm") == 1);
    CHECK(space.algorithm_seeds[1].at("algorithm") == 0);
    CHECK(space.algorithm_seeds[2].at("algorithm") == 1);
    CHECK(space.algorithm_seeds[2].at("images_per_task") > 1);
    for (const Knobs &seed : space.algorithm_seeds) {
        CHECK(space.check(seed).empty());
        CHECK(space.canonical(seed) == seed);
    }
    for (const Knobs &seed : op->space(Device::cpu, grouped).algorithm_seeds) CHECK(seed.at("algorithm") != 1);
}

TEST_CASE("Conv2DBackpropInput's Winograd algorithm: only 3x3 stride-1 float variants, only its own knobs",
          "[records][tuner]") {
    const OpSchema *op = find_op("Conv2DBackpropInput");
    const Structure three{"float32", "NHWC",
                          {{"dilation_height", 1}, {"dilation_width", 1}, {"filter_height", 3}, {"filter_width", 3},
                           {"groups", 1}, {"stride_height", 1}, {"stride_width", 1}}};
    const KnobSpace space = op->space(Device::cpu, three);
    const Knobs defaults = space.defaults();
    // Every algorithm is seeded (dot; direct with one register of few
    // channels; Winograd for large and small batches; dot for small images),
    // each seed legal and canonical.
    REQUIRE(space.algorithm_seeds.size() == 5);
    for (const Knobs &seed : space.algorithm_seeds) {
        CHECK(space.check(seed).empty());
        CHECK(space.canonical(seed) == seed);
    }
    CHECK(space.algorithm_seeds[0].at("algorithm") == 1);
    CHECK(space.algorithm_seeds[1].at("algorithm") == 0);
    CHECK(space.algorithm_seeds[1].at("vectors_per_tile") == 1);
    const Knobs &winograd = space.algorithm_seeds[2];
    CHECK(winograd.at("algorithm") == 2);
    CHECK(space.algorithm_seeds[3].at("algorithm") == 2);
    CHECK(space.algorithm_seeds[3].at("tile_rows_per_task") > 0);
    CHECK(space.algorithm_seeds[4].at("algorithm") == 1);
    // Row tasks split single images only.
    Knobs rows = space.algorithm_seeds[3];
    rows["images_per_task"] = 2;
    CHECK(space.check(rows).find("images_per_task=1") != std::string::npos);
    // A knob Winograd does not read stays at its default.
    Knobs stray = winograd;
    stray["tile_y"] = 2;
    CHECK(space.check(stray).find("ignores tile_y") != std::string::npos);
    CHECK(space.canonical(stray) == winograd);
    // Strides, other filter sizes, groups and 16-bit floats are not Winograd's.
    for (const auto &[param, value] : std::map<std::string, int>{
             {"stride_width", 2}, {"filter_height", 5}, {"groups", 0}, {"dilation_height", 2}}) {
        Structure other = three;
        other.fixed[param] = value;
        INFO(param);
        CHECK(!op->space(Device::cpu, other).check(winograd).empty());
        for (const Knobs &seed : op->space(Device::cpu, other).algorithm_seeds) CHECK(seed.at("algorithm") != 2);
    }
    Structure half = three;
    half.dtype = "float16";
    CHECK(op->space(Device::cpu, half).check(winograd).find("float32/float64") != std::string::npos);
    // The sampler reaches it, with the other algorithms' knobs at their defaults.
    int proposed = 0;
    sample_settings(space, 13, [&](const Knobs &k) {
        if (k.at("algorithm") != 2) return;
        proposed++;
        for (const char *knob : {"tile_channels", "tile_y", "rows_per_task", "pack_filter", "channel_block"})
            CHECK(k.at(knob) == defaults.at(knob));
    });
    CHECK(proposed > 10);
}

TEST_CASE("Conv2DBackpropFilter's sampler proposes both loop nests, each with only its own knobs", "[records][tuner]") {
    const OpSchema *op = find_op("Conv2DBackpropFilter");
    const Structure one_by_one{"float32", "NHWC",
                               {{"dilation_height", 1}, {"dilation_width", 1}, {"filter_height", 1},
                                {"filter_width", 1}, {"groups", 1}, {"stride_height", 1}, {"stride_width", 1}}};
    const KnobSpace space = op->space(Device::cpu, one_by_one);
    const Knobs defaults = space.defaults();
    const int tasks = sample_settings(space, 11, [&](const Knobs &k) {
        if (k.at("algorithm") == 1) {
            CHECK(k.at("ci_outer") == defaults.at("ci_outer"));
        } else {
            for (const char *knob : {"ci_tasks", "o_tiles_per_task", "row_tasks", "reduction_tasks"})
                CHECK(k.at(knob) == defaults.at(knob));
        }
    });
    CHECK(tasks > 20);
    CHECK(kSamples - tasks > 20);
    // A version-1 record reads as the blocks-outer schedule it was tuned as.
    Knobs old = defaults;
    for (const char *knob : {"algorithm", "ci_tasks", "o_tiles_per_task", "row_tasks", "reduction_tasks"})
        old.erase(knob);
    int version = 1;
    REQUIRE(op->upgrade(Device::cpu, one_by_one, &version, &old).empty());
    CHECK(version == op->knob_space_version);
    CHECK(old == defaults);
}

TEST_CASE("text suite files: one call per line, the same calls as the JSON form", "[suite]") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("gradtune-text-suite-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string path = (dir / "shapes.txt").string();
    std::ofstream(path) << "# ResNet-50 res3a projection, as in bench/suites/real_layers.json\n"
                           "Conv2DBackpropInput N=16 H=56 W=56 C=256 K=512 f=1x1 s=2 SAME id=R2\n"
                           "\n"
                           "DepthwiseConv2dNativeBackpropInput N=1 H=7 W=6 C=5 f=3 VALID T=float64  # a comment\n"
                           "FractionalAvgPoolGrad N=1 H=56 W=56 C=128 OH=39 OW=39 overlapping\n";
    const std::vector<gradtune::tooling::SuiteEntry> suite = gradtune::tooling::load_suite(path);
    REQUIRE(suite.size() == 3);
    CHECK(suite[0].id == "R2");
    CHECK(suite[0].batch == 16);
    // The JSON suite's R2/N16 call, input for input.
    int compared = 0;
    for (const gradtune::tooling::SuiteEntry &e : gradtune::tooling::load_suite(GRADTUNE_GOLDEN_DIR "/../../bench/suites/real_layers.json")) {
        if (e.name() != "R2/N16" || e.op != "Conv2DBackpropInput") continue;
        CHECK(suite[0].call.at("inputs") == e.call.at("inputs"));
        CHECK(suite[0].call.at("attrs").at("strides") == e.call.at("attrs").at("strides"));
        CHECK(suite[0].call.at("attrs").at("padding") == e.call.at("attrs").at("padding"));
        compared++;
    }
    CHECK(compared == 1);
    const nlohmann::json &dw = suite[1].call.at("inputs");
    CHECK(suite[1].id == "L4");
    CHECK(dw.at("out_backprop").at("shape") == nlohmann::json{1, 5, 4, 5});
    CHECK(dw.at("filter").at("dtype") == "float64");
    CHECK(suite[2].call.at("attrs").at("overlapping") == true);
    CHECK(suite[2].call.at("inputs").at("row_pooling_sequence").at("values").size() == 40);

    // A bad line names the file, the line and the field.
    std::ofstream(path) << "Conv2DBackpropInput N=1 H=8 W=8 C=4 f=3 s=2 stride=2\n";
    CHECK_THROWS_WITH(gradtune::tooling::load_suite(path), Catch::Contains(path + ":1: unknown field 'stride=2'"));
    std::ofstream(path) << "DepthwiseConv2dNativeBackpropInput N=1 H=0 W=8 C=4 f=3\n";
    CHECK_THROWS_WITH(gradtune::tooling::load_suite(path), Catch::Contains("'H' = 0 is out of range"));
    std::ofstream(path) << "Conv2DBackpropInputs N=1 H=8 W=8 C=4 f=3\n";  // a typo, or an op left out of this build
    CHECK_THROWS_WITH(gradtune::tooling::load_suite(path),
                      Catch::Contains(path + ":1: unknown op 'Conv2DBackpropInputs' (this build's ops: ") &&
                          Catch::Contains("Conv2DBackpropFilter"));
    std::ofstream(path) << "# nothing\n";
    CHECK_THROWS_WITH(gradtune::tooling::load_suite(path), Catch::Contains("no calls"));
    std::ofstream(path) << "DepthwiseConv2dNativeBackpropInput N=1,x H=8 W=8 C=4 f=3\n";
    CHECK_THROWS_WITH(gradtune::tooling::load_suite(path), Catch::Contains("not a number in 'N=1,x'"));
    fs::remove_all(dir);
}

TEST_CASE("an integer field holding a float out of the integer's range is refused and never cast", "[records][suite]") {
    // nlohmann's get<int>() casts a float unchecked (undefined behaviour out
    // of range): the JSON fuzzer's finding was a suite row with "batch": 1.1e91.
    using nlohmann::json;
    const std::string path = temp_file("out_of_range.json");
    std::ofstream(path) << R"([{"id": "R1", "batch": 1.1e91, "call": {"op": "Conv2D"}}])";
    CHECK_THROWS_WITH(gradtune::tooling::load_suite(path), Catch::Contains("batch must be an integer in range, not 1.1e+91"));
    std::ofstream(path) << R"([{"id": "R1", "batch": 0, "call": {"op": "Conv2D"}}])";
    CHECK_THROWS_WITH(gradtune::tooling::load_suite(path), Catch::Contains("row 'R1' has batch 0"));

    // Records: a knob, a shape size, the schema version; each names the file.
    write_record_file(path, RecordFile{sample_record().op, "x86-64-linux-avx2", {sample_record()}});
    const json good = json::parse(slurp(path));
    auto refused = [&](const std::function<void(json &)> &edit, const std::string &why) {
        json j = good;
        edit(j);
        std::ofstream(path) << j.dump();
        CHECK_THROWS_WITH(read_record_file(path), Catch::Contains(path) && Catch::Contains(why));
    };
    refused([](json &j) { j["records"][0]["knobs"]["tile_y"] = 1e91; }, "knobs.tile_y must be an integer in range");
    refused([](json &j) { j["records"][0]["knobs"]["tile_y"] = 2.0; }, "knobs.tile_y must be an integer in range, not 2.0");
    refused([](json &j) { j["records"][0]["knobs"]["tile_y"] = int64_t{1} << 40; }, "knobs.tile_y must be an integer");
    refused([](json &j) { j["records"][0]["shape"]["N"] = -1e300; }, "shape.N must be an integer in range");
    refused([](json &j) { j["records"][0]["samples"] = 1e10; }, "samples must be an integer in range");
    refused([](json &j) { j["schema_version"] = 1e20; }, "schema_version must be an integer in range");

    // A call spec's int64 values and shapes come back as a refusal (Status).
    Tensor t;
    CHECK(!gradtune::tooling::tensor_from_json(json{{"dtype", "int64"}, {"values", {1e91}}}, &t).ok());
    CHECK(!gradtune::tooling::tensor_from_json(json{{"dtype", "float32"}, {"shape", {2, 1e30}}}, &t).ok());
    CHECK(gradtune::tooling::tensor_from_json(json{{"dtype", "int64"}, {"values", {int64_t{1} << 40}}}, &t).ok());
    std::filesystem::remove(path);
}

TEST_CASE("the default suite is bench/suites/default.txt: every row at every batch size, op by op", "[suite]") {
    using gradtune::tooling::SuiteEntry;
    const std::string file = GRADTUNE_GOLDEN_DIR "/../../bench/suites/default.txt";
    const std::vector<SuiteEntry> from_file = gradtune::tooling::load_suite(file);  // N=1,32 lines
    const std::vector<SuiteEntry> built_in = gradtune::tooling::default_suite();
    REQUIRE(built_in.size() == from_file.size());
    // The same calls (the built-in copy is the file), ordered op by op, then
    // by batch size, then by row.
    std::map<std::string, nlohmann::json> calls;
    for (const SuiteEntry &e : from_file) CHECK(calls.emplace(e.op + " " + e.name(), e.call).second);
    std::map<std::string, int> per_op;
    for (size_t i = 0; i < built_in.size(); i++) {
        const SuiteEntry &e = built_in[i];
        INFO(e.op << " " << e.name());
        CHECK(calls.at(e.op + " " + e.name()) == e.call);
        per_op[e.op]++;
        if (i > 0 && built_in[i - 1].op == e.op) CHECK(built_in[i - 1].batch <= e.batch);
        // Every call is one the runtime takes (the N=1 ones: they are cheap
        // to materialise, and N only scales the first dimension).
        if (e.batch != 1) continue;
        gradtune::tooling::MaterialisedCall m;
        gradtune::CallInfo info;
        gradtune::Status st = gradtune::tooling::materialise(e.call, 1, &m);
        if (st.ok()) st = gradtune::DescribeCall(m.call, &info);
        CHECK(st.ok());
        CHECK(info.shape.at("N") == e.batch);
    }
    CHECK(per_op == std::map<std::string, int>{{"DepthwiseConv2dNativeBackpropInput", 12},
                                               {"DepthwiseConv2dNativeBackpropFilter", 12},
                                               {"Conv2DBackpropInput", 12},
                                               {"FractionalAvgPoolGrad", 10},
                                               {"Conv2DBackpropFilter", 4},
                                               {"DepthwiseConv2dNative", 12},
                                               {"Conv2D", 4},
                                               {"FractionalAvgPool", 4}});
    CHECK(built_in.front().name() == "D1/N1");
    // --batch replaces N; --op selects ops.
    const std::vector<SuiteEntry> n8 = gradtune::tooling::default_suite({"Conv2DBackpropInput"}, {8});
    REQUIRE(n8.size() == 6);
    CHECK(n8[4].name() == "C5/N8");
    CHECK(n8[4].call.at("inputs").at("out_backprop").at("shape") == nlohmann::json{8, 28, 28, 128});
}

TEST_CASE("distill compares trials by their time relative to the generic variant timed beside them", "[records][tuner]") {
    // Trials of one shape measured in two runs hours apart: the machine was
    // faster during the first, so its candidate has the lower absolute time
    // but the higher time relative to the generic variant.
    const std::string dir = temp_file("distill_" + std::to_string(getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const Record base = sample_record();
    const KnobSpace space = find_op(base.op)->space(Device::cpu, base.structure);
    const tooling::BuildInfo &info = tooling::build_info();
    const tooling::Trial proto = ok_trial_like(base);
    auto trial = [&](const std::string &shape_id, int64_t h, const Knobs &knobs, double ms, double generic_ms) {
        tooling::Trial t = proto;
        t.shape_id = shape_id;
        t.shape = {{"N", 1}, {"H", h}, {"W", h}, {"C", 16}};
        t.knobs = knobs;
        t.median_ms = ms;
        t.generic_median_ms = generic_ms;
        return t;
    };
    Knobs fast_hour = space.defaults(), slow_hour = space.defaults(), other = space.defaults(), late = space.defaults();
    fast_hour["tile_other"] = 1;
    slow_hour["tile_other"] = 2;
    other["tile_other"] = 8;
    late["vectors_per_tile"] = 1;
    for (const Knobs &k : {fast_hour, slow_hour, other, late}) REQUIRE(space.check(k).empty());
    tooling::TrialLog log(dir + "/trials.jsonl");
    // Shapes A and B: three settings each. Shape C, added by a later retune:
    // one setting, measured on C only.
    log.append(trial("A", 8, fast_hour, 1.0, 2.0));  // 0.50 of generic
    log.append(trial("A", 8, slow_hour, 1.2, 3.0));  // 0.40 of generic: the best
    log.append(trial("A", 8, other, 1.1, 2.0));      // 0.55
    log.append(trial("B", 9, fast_hour, 1.0, 2.0));  // 0.50
    log.append(trial("B", 9, slow_hour, 1.5, 3.0));  // 0.50
    log.append(trial("B", 9, other, 1.5, 2.0));      // 0.75
    log.append(trial("C", 10, late, 1.0, 4.0));
    tooling::DistillOptions options;
    options.log_path = log.path();
    options.records_dir = dir + "/records";
    options.defaults_dir = dir + "/defaults";
    REQUIRE(tooling::distill(options) == 0);
    const RecordFile file =
        read_record_file(options.records_dir + "/" + info.target_class() + "/" + base.op + ".json");
    REQUIRE(file.records.size() == 3);
    for (const Record &r : file.records) {
        INFO(r.shape_key());
        if (r.shape.at("H") == 8) {
            CHECK(r.knobs == slow_hour);
            CHECK(r.median_ms == 1.2);
        }
        if (r.shape.at("H") == 9) CHECK(r.knobs == fast_hour);
    }
    // The default: chosen over A and B (slow_hour: worst ratio 1.0), not
    // left unchosen because no setting was measured on C too.
    const std::vector<StructureDefault> defaults = read_structure_defaults(options.defaults_dir);
    REQUIRE(defaults.size() == 1);
    CHECK(defaults[0].knobs == slow_hour);
    CHECK(defaults[0].worst_ratio == 1.0);
    CHECK(defaults[0].chosen_by.find("measured on 2 of the 3 shapes") != std::string::npos);
    std::filesystem::remove_all(dir);
}

TEST_CASE("a trial's --evict-mb is part of its identity: warm and cold trials never resume or distill as one",
          "[records][tuner]") {
    const std::string dir = temp_file("distill_evict_" + std::to_string(getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const Record base = sample_record();
    const KnobSpace space = find_op(base.op)->space(Device::cpu, base.structure);
    const tooling::BuildInfo &info = tooling::build_info();
    tooling::Trial warm = ok_trial_like(base);
    warm.shape_id = "A";
    warm.shape = {{"N", 1}, {"H", 8}, {"W", 8}, {"C", 16}};
    warm.knobs = space.defaults();
    warm.median_ms = 1.0;
    warm.generic_median_ms = 2.0;
    Knobs cold_best = space.defaults();
    cold_best["tile_other"] = 8;
    REQUIRE(space.check(cold_best).empty());
    tooling::Trial cold = warm;
    cold.evict_mb = 8;
    CHECK(cold.measurement_key() != warm.measurement_key());
    CHECK(cold.candidate_key() == warm.candidate_key());  // one compiled kernel
    {
        tooling::TrialLog log(dir + "/trials.jsonl");
        log.append(warm);
        cold.median_ms = 1.6;  // the warm setting, timed cold
        log.append(cold);
        cold.knobs = cold_best;
        cold.median_ms = 1.2;  // 0.6 of generic: beaten by the warm one's 0.5 had they mixed
        log.append(cold);
    }
    const tooling::TrialLog log(dir + "/trials.jsonl");  // read back: evict_mb is logged
    REQUIRE(log.trials().size() == 3);
    CHECK(log.trials()[0].evict_mb == 0);
    CHECK(log.trials()[2].evict_mb == 8);
    CHECK(log.measured(warm.measurement_key()));
    tooling::DistillOptions options;
    options.log_path = log.path();
    options.defaults_dir = "";
    for (const double evict_mb : {0.0, 8.0}) {
        INFO("distill --evict-mb " << evict_mb);
        options.measure.evict_mb = evict_mb;
        options.records_dir = dir + "/records_" + std::to_string(static_cast<int>(evict_mb));
        REQUIRE(tooling::distill(options) == 0);
        const RecordFile file =
            read_record_file(options.records_dir + "/" + info.target_class() + "/" + base.op + ".json");
        REQUIRE(file.records.size() == 1);
        CHECK(file.records[0].knobs == (evict_mb > 0 ? cold_best : space.defaults()));
        CHECK(file.records[0].median_ms == (evict_mb > 0 ? 1.2 : 1.0));
        CHECK(file.records[0].evict_mb == evict_mb);  // says how its times were taken
    }
    std::filesystem::remove_all(dir);
}

TEST_CASE("the tuner's hill climbing proposes every untried one-knob neighbour of a best, then jumps", "[tuner]") {
    KnobSpace space;
    space.knobs = {{"tile", {1, 2, 4}, 2, ""}, {"tasks", {0, 1}, 0, ""}, {"width", {8, 16, 32}, 32, ""}};
    // tile=1 with width=16 is illegal: that neighbour is never proposed.
    space.constraint = [](const Knobs &k) {
        return k.at("tile") == 1 && k.at("width") == 16 ? std::string("illegal pair") : std::string();
    };
    const Knobs base = space.defaults();  // tile=2 tasks=0 width=32
    tooling::Sampler sampler(space, 7);
    std::set<std::string> tried = {knobs_text(base)};
    std::set<std::string> expected = {knobs_text({{"tile", 1}, {"tasks", 0}, {"width", 32}}),
                                      knobs_text({{"tile", 4}, {"tasks", 0}, {"width", 32}}),
                                      knobs_text({{"tile", 2}, {"tasks", 1}, {"width", 32}}),
                                      knobs_text({{"tile", 2}, {"tasks", 0}, {"width", 16}})};
    // One neighbour already measured (by an earlier run, say) is skipped.
    tried.insert(knobs_text({{"tile", 2}, {"tasks", 0}, {"width", 16}}));
    std::set<std::string> proposed;
    for (int i = 0; i < 3; i++) {
        const std::string text = knobs_text(sampler.neighbour(base, tried));
        CHECK(expected.count(text));
        CHECK(tried.insert(text).second);
        proposed.insert(text);
    }
    CHECK(proposed.size() == 3);
    // A local optimum: every neighbour tried, so it jumps (legal, not base).
    for (int i = 0; i < 20; i++) {
        const Knobs k = sampler.neighbour(base, tried);
        CHECK(space.check(k).empty());
        CHECK(k != base);
    }
}

TEST_CASE("the suite readers know an op by what it declares, not by its name", "[suite]") {
    using gradtune::tooling::op_traits;
    const auto dense = op_traits("Conv2DBackpropFilter");
    CHECK(!dense.depthwise);
    CHECK(!dense.pooling);
    CHECK(dense.inputs == std::vector<std::string>{"input", "filter_sizes", "out_backprop"});
    CHECK(dense.takes("filter_sizes"));
    CHECK(!dense.takes("input_sizes"));
    CHECK(op_traits("DepthwiseConv2dNativeBackpropInput").depthwise);
    const auto pooling = op_traits("FractionalAvgPool");
    CHECK(pooling.pooling);
    CHECK(!pooling.takes("out_backprop"));
    CHECK(op_traits("FractionalAvgPoolGrad").takes("out_backprop"));
    CHECK_THROWS_WITH(op_traits("Conv3DBackpropInputV2"), Catch::Contains("unknown op 'Conv3DBackpropInputV2'"));
    // A signature of an op nobody registered is refused with the op's name.
    const nlohmann::json signature = {{"op", "MaxPoolGrad"},      {"T", "float32"},   {"data_format", "NHWC"},
                                      {"structure", nlohmann::json::object()}, {"padding", "VALID"},
                                      {"shape", {{"N", 1}, {"H", 4}, {"W", 4}, {"C", 1}}}};
    CHECK_THROWS_WITH(gradtune::tooling::entry_from_signature(signature), Catch::Contains("unknown op 'MaxPoolGrad'"));
}

TEST_CASE("journal suites rebuild EXPLICIT padding from the journalled pads", "[suite]") {
    const std::string path = temp_file("journal_explicit_" + std::to_string(getpid()) + ".jsonl");
    // Written by the runtime's journal for the call below.
    gradtune::CallInfo info{"Conv2DBackpropInput", "float32", "NHWC",
                            {{"dilation_height", 1}, {"dilation_width", 1}, {"filter_height", 3}, {"filter_width", 3},
                             {"groups", 1}, {"stride_height", 1}, {"stride_width", 1}},
                            "EXPLICIT", {{"N", 1}, {"H", 8}, {"W", 8}, {"C", 4}, {"O", 4}}, {1, 0, 2, 1}};
    {
        gradtune::internal::Journal journal(path);
        journal.count(info, gradtune::Device::cpu, gradtune::internal::Selection{nullptr, "v", gradtune::internal::Tier::generic, "why"}, 1.0);
    }
    std::ifstream in(path);
    std::string line;
    REQUIRE(std::getline(in, line));
    CHECK_THAT(line, Catch::Contains(R"("explicit_paddings": [1, 0, 2, 1])"));
    const gradtune::tooling::JournalSuite suite = gradtune::tooling::journal_suite(path, "cpu", 0);
    REQUIRE(suite.entries.size() == 1);
    const nlohmann::json &call = suite.entries[0].call;
    CHECK(call["attrs"]["explicit_paddings"] == nlohmann::json({0, 0, 1, 0, 2, 1, 0, 0}));
    // 8 + 1 + 0 - 3 + 1 rows, 8 + 2 + 1 - 3 + 1 columns.
    CHECK(call["inputs"]["out_backprop"]["shape"] == nlohmann::json({1, 7, 9, 4}));
    // The rebuilt call is valid and describes itself as the journalled one.
    gradtune::tooling::MaterialisedCall m;
    gradtune::CallInfo rebuilt;
    REQUIRE(gradtune::tooling::materialise(call, 1, &m).ok());
    REQUIRE(gradtune::DescribeCall(m.call, &rebuilt).ok());
    CHECK(rebuilt.padding == "EXPLICIT");
    CHECK(rebuilt.explicit_paddings == info.explicit_paddings);
    CHECK(rebuilt.shape == info.shape);
    std::filesystem::remove(path);
}

TEST_CASE("journal suites: call counts summed over any number of processes saturate", "[suite]") {
    const std::string path = temp_file("journal_sum_" + std::to_string(getpid()) + ".jsonl");
    {
        std::ofstream out(path);
        for (int p = 0; p < 10000; p++)  // 10^4 processes x 10^15 calls: more than 2^63
            out << R"({"journal": 1, "process": "p)" << p
                << R"(", "device": "cpu", "calls": 1000000000000000, "total_ms": 1.5, "tier": "generic", )"
                << R"("variant": "v", "op": "DepthwiseConv2dNativeBackpropInput", "T": "float32", )"
                << R"("data_format": "NHWC", "padding": "SAME", "shape": {"N": 1, "H": 8, "W": 8, "C": 4}, )"
                << R"("structure": {"filter_height": 3, "filter_width": 3, "stride": 1, "depth_multiplier": 1, )"
                << R"("dilation_height": 1, "dilation_width": 1}})" << "\n";
    }
    const gradtune::tooling::JournalSuite suite = gradtune::tooling::journal_suite(path, "cpu", 0);
    REQUIRE(suite.entries.size() == 1);
    CHECK_THAT(suite.entries[0].description, Catch::Contains("9223372036854775807 calls"));
    std::filesystem::remove(path);
}

TEST_CASE("knobs fitted to AVX2's 16 ymm registers: legal, a vector per register, a tile that fits", "[records]") {
    const RegisterFile avx2{32, 16};
    // A direct (algorithm 0) 3x3 stride-1 input-gradient setting tuned on
    // AVX-512: 2 vectors of 16 lanes x 7 columns (17 zmm registers; 33 ymm
    // as it is).
    const OpSchema *input = find_op("Conv2DBackpropInput");
    REQUIRE(input);
    Structure s{"float32", "NHWC", {}};
    for (const std::string &param : input->structure_params) s.fixed[param] = 1;
    s.fixed["filter_height"] = s.fixed["filter_width"] = 3;
    const KnobSpace space = input->space(Device::cpu, s);
    REQUIRE(space.registers);
    Knobs knobs = space.defaults();
    knobs["algorithm"] = 0;
    knobs["vector_width"] = 16;
    knobs["vectors_per_tile"] = 2;
    knobs["tile_other"] = 7;
    knobs["tile_y"] = 1;
    knobs = space.canonical(knobs);
    REQUIRE(space.check(knobs).empty());
    REQUIRE(space.registers(knobs) == 17);
    CHECK(fit_register_file(space, knobs, 4, kAvx512Registers) == knobs);
    // Fitted: 8-lane vectors (one ymm each), then the column that frees the
    // fewest registers: 2 x 6 accumulators, 2 filter vectors, 1 broadcast.
    Knobs fitted = fit_register_file(space, knobs, 4, avx2);
    CHECK(space.check(fitted).empty());
    CHECK(fitted.at("vector_width") == 8);
    CHECK(fitted.at("tile_other") == 6);
    CHECK(space.registers(fitted) == 15);
    fitted["vector_width"] = 16;
    fitted["tile_other"] = 7;
    CHECK(fitted == knobs);  // nothing else moved
    // A space without a register count compiles as tuned.
    const OpSchema *filter = find_op("Conv2DBackpropFilter");
    REQUIRE(filter);
    CHECK_FALSE(filter->space(Device::cpu, s).registers);

    // Every committed structure default: legal after fitting, and the tile
    // fits (where the space can shrink it that far).
    int fitted_count = 0;
    for (StructureDefault d : read_structure_defaults(tooling::build_info().defaults_dir())) {
        if (d.device != Device::cpu) continue;
        const OpSchema *op = find_op(d.op);
        REQUIRE(op);
        REQUIRE(op->upgrade(d.device, d.structure, &d.knob_space_version, &d.knobs).empty());
        const KnobSpace op_space = op->space(Device::cpu, d.structure);
        if (!op_space.registers) continue;
        const int bytes = accumulator_bytes(d.structure.dtype);
        INFO(d.op << " " << d.structure.key());
        const Knobs f = fit_register_file(op_space, d.knobs, bytes, avx2);
        CHECK(op_space.check(f).empty());
        CHECK(f.at("vector_width") * bytes <= 32);
        CHECK(op_space.registers(f) <= 16);
        fitted_count += f != d.knobs;
    }
    CHECK(fitted_count > 0);
}
