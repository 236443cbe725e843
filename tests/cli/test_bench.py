"""The benchmark command runs end to end and reports every comparison (no timing assertions: see docs)."""

from __future__ import annotations

import json

from core.bench.runner import alternate, summary
from core.cli.main import main


def test_alternate_interleaves_and_flips_the_order():
    calls = []
    a, b = alternate(4, lambda: calls.append("a") or 1.0, lambda: calls.append("b") or 2.0)
    assert calls == ["a", "b", "b", "a", "a", "b", "b", "a"]
    assert (a, b) == ([1.0] * 4, [2.0] * 4)
    assert summary("x", "A", a, "B", b)["ratio_b_over_a"] == 2.0


def test_bench_reports_every_comparison(bundles, tmp_path, capsys):
    out = tmp_path / "bench.json"
    code = main(["bench", "--bundle", str(bundles["original"]), "--quick", "--provider", "cpu", "--json", str(out)])
    text = capsys.readouterr()[0]
    assert code == 0
    report = json.loads(out.read_text())
    names = " | ".join(c["name"] for c in report["comparisons"])
    for expected in (
        "short context",
        "long context",
        "CFG",
        "Prefill",
        "conditioning cache",
        "first audio",
        "idle threads",
        "intra-op threads",
    ):
        assert expected in names
    assert all(c["a_median"] > 0 and c["b_median"] > 0 for c in report["comparisons"])
    for key in (
        "python_overhead_share",
        "python_overhead_share_sampled",
        "step_over_floor",
        "memory_bandwidth_gbs",
        "ttfa_share_of_total",
    ):
        assert report["figures"][key] > 0
    assert report["machine"]["cores"] >= 1 and "ratio" in text


def test_bench_reports_the_pipeline_figures_under_stable_keys(bundles, tmp_path, capsys):
    """decoder.fixed_ms/per_token_ms, streaming.ttfa_ms/total_ratio, book.throughput_ratio, cold_start, bundle."""
    out = tmp_path / "bench.json"
    code = main(
        [
            "bench",
            "--bundle",
            str(bundles["turbo"]),
            "--quick",
            "--provider",
            "cpu",
            "--json",
            str(out),
            "--only",
            "decoder,plan,book,cold,q4",
        ]
    )
    assert code == 0, capsys.readouterr()
    report = json.loads(out.read_text())
    assert report["bundle"] == {"path": str(bundles["turbo"]), "faithful": False, "standin": True}
    assert report["decoder"]["fixed_ms"] == report["decoder"]["fixed_ms"]  # a number, not NaN
    assert report["decoder"]["per_token_ms"] > 0 and set(report["decoder"]["call_100_tokens_by_prompt_ms"]) == {
        "10s",
        "6s",
        "3s",
    }
    assert report["streaming"]["ttfa_ms"] > 0 and report["streaming"]["total_ratio"] > 0
    assert report["streaming"]["decoder_calls"] >= 5 and report["streaming"]["underruns_after_first"] >= 0
    assert report["book"]["throughput_ratio"] > 0 and report["cold_start"]["first_audio_ms"] > 0
    assert "q4_int8" not in report  # an fp32 language model: nothing to compare


def test_bench_compares_int8_and_fp32_compute_on_a_q4_model(tmp_path, capsys):
    from core.standin import make_standin

    bundle = make_standin(tmp_path / "q4", "original", precision="q4", seed=7)
    out = tmp_path / "bench.json"
    code = main(
        [
            "bench",
            "--bundle",
            str(bundle),
            "--precision",
            "q4",
            "--quick",
            "--provider",
            "cpu",
            "--json",
            str(out),
            "--only",
            "q4",
        ]
    )
    assert code == 0, capsys.readouterr()
    q4 = json.loads(out.read_text())["q4_int8"]
    assert q4["step_ratio"] > 0 and q4["cfg_step_ratio"] > 0 and 0 <= q4["token_agreement"] <= 1


def test_bench_export_reports_speed_and_memory_by_book_length(tmp_path):
    out = tmp_path / "export.json"
    code = main(
        ["bench-export", "--hours", "0.01,0.02", "--formats", "m4b", "--folder", str(tmp_path), "--json", str(out)]
    )
    assert code == 0
    report = json.loads(out.read_text())
    assert [row["format"] for row in report["speed"]] == ["m4b"]
    assert report["speed"][0]["x_realtime"] > 0 and report["speed"][0]["bytes"] > 0
    assert [row["audio_h"] for row in report["memory"]] == [0.01, 0.02]
    assert all(row["above_base_mb"] >= 0 for row in report["memory"]) and report["memory_ratio"] > 0


def test_bench_api_reports_first_audio_per_format_next_to_the_total(bundles, tmp_path):
    out = tmp_path / "api.json"
    code = main(["bench-api", "--bundle", str(bundles["original"]), "--only", "formats", "--json", str(out)])
    assert code == 0
    rows = json.loads(out.read_text())["first_bytes"]
    assert [row["format"] for row in rows] == ["pcm", "wav", "mp3", "aac", "opus", "flac"]
    assert all(0 < row["first_audio_s"] <= row["total_s"] and row["bytes"] > 0 for row in rows)


def test_bench_api_reports_first_audio_through_wyoming_beside_http(bundles, tmp_path):
    out = tmp_path / "wyoming.json"
    args = ["bench-api", "--bundle", str(bundles["turbo"]), "--only", "wyoming", "--rounds", "1"]
    assert main([*args, "--json", str(out)]) == 0
    found = json.loads(out.read_text())["wyoming"]
    assert found["rounds"] == 1 and all(found[key] > 0 for key in ("http", "wyoming_plain", "wyoming_streamed"))
    assert found["streamed_first_audio_before_stop"]  # spoken while the rest of the text was still being written


def test_bench_reports_both_playback_policies_per_run(bundles, tmp_path, capsys):
    """oneshot.rtf, streaming_smooth.* next to streaming.* (start fast), with --runs runs of each, per run."""
    out = tmp_path / "bench.json"
    args = ["bench", "--bundle", str(bundles["turbo"]), "--quick", "--provider", "cpu", "--only", "plan"]
    code = main([*args, "--runs", "3", "--json", str(out)])
    text = capsys.readouterr()[0]
    assert code == 0, text
    report = json.loads(out.read_text())
    assert report["oneshot"]["rtf"] > 0
    smooth, fast = report["streaming_smooth"], report["streaming"]
    assert smooth["ttfa_ms"] > 0 and smooth["underruns_after_first"] >= 0 and smooth["underrun_s"] >= 0
    assert len(smooth["runs"]) == 3 and len(fast["runs"]) == 3 and 0 <= smooth["runs_without_underrun"] <= 3
    assert all({"ttfa_ms", "underruns", "underrun_s"} <= set(run) for run in smooth["runs"] + fast["runs"])
    for key in ("ttfa_ms", "total_ratio", "underruns_after_first", "underrun_ms", "decoder_calls", "one_shot_rtf"):
        assert key in fast  # the existing keys stay: "start fast"
    assert "start fast" in text and "play smoothly" in text


def test_bench_screen_reports_the_screen_beside_the_render(bundles, voice_wav, tmp_path):
    out = tmp_path / "screen.json"
    code = main(
        [
            "bench-screen",
            "--bundle",
            str(bundles["turbo"]),
            "--voice",
            str(voice_wav),
            "--sentences",
            "3",
            "--max-new-tokens",
            "40",
            "--asr",
            "sphinx",
            "--folder",
            str(tmp_path / "work"),
            "--json",
            str(out),
        ]
    )
    report = json.loads(out.read_text())
    assert code == 0 and report["takes"] == 3 and report["variant"] == "turbo"
    assert all(row["render_s"] > 0 and row["screen_ms"] > 0 and "asr_ms" in row for row in report["rows"])
    assert 0 < report["screen_share"] < 1 and report["asr"] == "pocketsphinx" and report["asr_share"] > 0


def test_bench_words_reports_the_aligners_time_beside_the_render(bundles, voice_wav, tmp_path, stand_in_aligner):
    out = tmp_path / "words.json"
    args = ["bench-words", "--bundle", str(bundles["turbo"]), "--voice", str(voice_wav), "--sentences", "2"]
    code = main([*args, "--max-new-tokens", "30", "--folder", str(tmp_path / "work"), "--json", str(out)])
    report = json.loads(out.read_text())
    assert code == 0 and report["takes"] == 2 and report["variant"] == "turbo"
    assert report["aligned"] == 2 and len(stand_in_aligner.calls) == 2  # only the render with words aligned
    assert report["render_s"] > 0 and report["render_with_words_s"] > 0 and report["render_ratio"] > 0
    assert 0 <= report["align_share"] < 1 and report["audio_s"] > 0
    assert report["render_cpu_s"] > 0 and report["align_cpu_s"] == 0.0  # the stand-in aligner spends none
    if report["speech"] is not None:  # espeak-ng's speech, aligned by the real aligner's process
        assert report["speech"]["placed"] > 0.8 and report["speech"]["align_s_per_audio_s"] > 0
        assert report["speech_share"] > 0 and report["speech"]["align_cpu_s_per_audio_s"] > 0


def test_bench_convert_reports_speed_and_the_seeded_noise_beside_the_graphs(tmp_path, voice_wav):
    from core.standin import make_standin

    noisy = make_standin(tmp_path / "noisy", "turbo", seed=7, decoder_noise=True)
    out = tmp_path / "convert.json"
    code = main(
        ["bench-convert", "--bundle", str(noisy), "--voice", str(voice_wav), "--seconds", "8", "--noise-calls", "2"]
        + ["--json", str(out)]
    )
    report = json.loads(out.read_text())
    conversion, noise = report["conversion"], report["noise"]
    assert code == 0 and conversion["overlapped_over_sequential"] > 0
    for side in ("overlapped", "sequential"):
        found = conversion[side]
        assert found["source_seconds"] == 8.0 and found["windows"] == 2 and found["x_real_time"] > 0
        assert 0 < found["first_audio_ms"] < found["total_s"] * 1000
    # The stand-in's noise is about 25 dB under its tone: every pair of draws is about equally far apart.
    for pair in ("graph_vs_graph", "seeded_vs_graph", "seeded_vs_seeded"):
        assert 10 < noise[pair]["log_mel_snr_db"] < 60
    assert abs(noise["level_difference_db"]) < 0.5 and noise["call_ms"]["seeded"] > 0
