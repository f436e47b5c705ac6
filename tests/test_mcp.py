"""`opindex mcp` driven the way an agent's client drives it: the MCP SDK's own client starts the server over stdio on
the sample index, lists its tools, calls each, pages a sql result, gets a refusal with a hint and tool errors for
unknown names (docs/mcp.md)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import REPO

pytest.importorskip("mcp", reason="the MCP Python SDK is not installed: pip install 'opindex[mcp]' (or '.[test]')")

NAMED = {"trace", "find", "op", "stub", "callers", "callees"}  # tools that take a `name`


def session(db, scenario):
    """Run `scenario(client)` against `python -m opindex mcp --db DB` started by the SDK's stdio client; its result."""
    import anyio
    from mcp import Client, StdioServerParameters
    params = StdioServerParameters(command=sys.executable, args=["-m", "opindex", "mcp", "--db", str(db)],
                                   cwd=str(REPO))
    out = []

    async def main():
        async with Client(params) as client:
            out.append(await scenario(client))
    anyio.run(main)
    return out[0]


def text(result) -> str:
    assert len(result.content) == 1 and result.content[0].type == "text"
    return result.content[0].text


def test_the_server_lists_every_tool_with_its_input_schema_and_says_which_index(sample_db):
    async def scenario(client):
        return client.instructions, (await client.list_tools()).tools
    instructions, tools = session(sample_db, scenario)
    assert [t.name for t in tools] == ["trace", "find", "op", "stub", "callers", "callees", "kernels", "sql",
                                       "profile", "diff", "coverage"]
    for t in tools:
        schema = t.input_schema
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert schema["properties"]["max_chars"]["default"] == 8000
        assert ("name" in schema["required"]) == (t.name in NAMED), t.name
        assert t.annotations.read_only_hint is True
    by_name = {t.name: t.input_schema for t in tools}
    assert by_name["trace"]["properties"]["detail"]["enum"] == ["main", "branches", "full"]
    assert by_name["sql"]["required"] == ["query"] and "cursor" in by_name["sql"]["properties"]
    assert by_name["profile"]["required"] == ["path"]
    assert f"opindex serves the index {sample_db} (--db)" in instructions
    assert f"checkout at {REPO / 'sample_checkout'}" in instructions


def test_each_tool_answers_with_text_and_structured_content(sample_db, tmp_path):
    kernels = tmp_path / "kernels.txt"
    kernels.write_text("void at::native::(anonymous namespace)::RowwiseMomentsCUDAKernel<float, float>(long, float, "
                       "float const*, float*, float*)\n")
    calls = [("trace", {"name": "nn.LSTM"}), ("find", {"name": "relu", "exact": True}), ("op", {"name": "add"}),
             ("stub", {"name": "add_stub"}), ("callers", {"name": "relu"}), ("callees", {"name": "at::native::relu"}),
             ("kernels", {"op": "relu"}), ("sql", {"query": "SELECT count(*) AS n FROM native_functions"}),
             ("profile", {"path": str(kernels)})]

    async def scenario(client):
        return [await client.call_tool(name, args) for name, args in calls]
    trace, find, op, stub, callers, callees, kernels_, sql, profile = session(sample_db, scenario)
    for r in (trace, find, op, stub, callers, callees, kernels_, sql, profile):
        assert r.is_error is False and r.structured_content
    chain = [h for h in trace.structured_content["hops"] if h["id"] in trace.structured_content["main_chain"]]
    assert (chain[0]["name"], chain[0]["at"]) == ("torch.nn.modules.rnn.LSTM", "torch/nn/modules/rnn.py:25")
    assert (chain[-1]["layer"], chain[-1]["name"], chain[-1]["at"]) == (
        "library", "cudnnRNNForward", "aten/src/ATen/native/cudnn/RNN.cpp:18")
    assert len(chain) == 14 and trace.structured_content["detail"] == "main"
    assert " 14  library      cudnnRNNForward" in text(trace) and "More: detail='branches'" in text(trace)
    assert "Branches" not in text(trace)  # the main grade leaves them out, and says how to get them
    assert [r[0] + " " + r[3] for r in find.structured_content["rows"]] == [
        "at::native::relu aten/src/ATen/native/Activation.cpp:8",
        "torch._C._VariableFunctions.relu torch/_C/_VariableFunctions.pyi:5",
        "torch._refs.relu torch/_refs/__init__.py:11", "torch.nn.functional.relu torch/nn/functional.py:12"]
    add_out = [e for e in op.structured_content["entries"] if e["function"] == "add.out"][0]
    assert [(d["key"], d["kernel"], d["at"]) for d in add_out["dispatch"]] == [
        ("CPU", "add_out", "aten/src/ATen/native/native_functions.yaml:47"),
        ("CUDA", "add_out", "aten/src/ATen/native/native_functions.yaml:47"),
        ("SparseCPU", "add_out_sparse_cpu", "aten/src/ATen/native/native_functions.yaml:48")]
    assert [(r["device"], r["kernel"], r["at"]) for r in stub.structured_content["registered"]] == [
        ("CPU", "add_kernel", "aten/src/ATen/native/cpu/BinaryOpsKernel.cpp:21"),
        ("CUDA", "add_kernel_cuda", "aten/src/ATen/native/cuda/BinaryAddKernel.cu:23")]
    assert [r[3] for r in callers.structured_content["rows"]] == [
        "torch/_tensor.py:12", "torch/_tensor.py:12", "torch/nn/functional.py:17", "torch/nn/modules/activation.py:12"]
    assert callees.structured_content["rows"] == [
        ["at::native::relu", "scalar_type", "self", "aten/src/ATen/native/Activation.cpp:9"],
        ["at::native::relu", "clamp_min", "at", "aten/src/ATen/native/Activation.cpp:10"]]
    assert kernels_.structured_content["rows"] == [["gpu_kernel", "tensor_iterator",
                                                    "aten/src/ATen/native/cuda/TensorCompare.cu:10"]]
    assert sql.structured_content["rows"] == [[26]] and text(sql) == "n\n26\n(1 row, all)\n"
    assert "\ncap: a chain keeps at most 16 hops; launch sites and library calls at most 5 each\n" in text(profile)
    assert profile.structured_content["summary"]["caps"] == [
        "a chain keeps at most 16 hops; launch sites and library calls at most 5 each"]
    row = profile.structured_content["rows"][0]
    assert (row[4], row[6], row[7]) == ("RowwiseMomentsCUDAKernel", "aten/src/ATen/native/cuda/layer_norm_kernel.cu:11",
                                        "native_layer_norm")


def test_sql_pages_with_a_cursor_and_a_cursor_pages_only_its_own_call(sample_db, ix):
    query = "SELECT full_name FROM native_functions ORDER BY full_name"
    expected = [r["full_name"] for r in ix.rows(query)]

    async def scenario(client):
        pages, cursor = [], None
        while True:
            r = await client.call_tool("sql", {"query": query, "limit": 10, **({"cursor": cursor} if cursor else {})})
            pages.append(r)
            cursor = r.structured_content.get("next_cursor")
            if not cursor:
                break
        first_cursor = pages[0].structured_content["next_cursor"]
        other = await client.call_tool("sql", {"query": "SELECT 1", "cursor": first_cursor})
        return pages, other
    pages, other = session(sample_db, scenario)
    assert [len(p.structured_content["rows"]) for p in pages] == [10, 10, 6]
    assert [r[0] for p in pages for r in p.structured_content["rows"]] == expected
    assert "(rows 11-20; more follow: call again with cursor=" in text(pages[1])
    assert text(pages[2]).endswith("(rows 21-26; no more)\n")
    assert other.is_error and other.structured_content["error"] == "bad_cursor"


def test_an_answer_over_max_chars_is_refused_with_the_narrower_calls_that_fit(sample_db):
    async def scenario(client):
        full = await client.call_tool("trace", {"name": "nn.LSTM", "detail": "full", "max_chars": 4000})
        sizes = {}
        for d in ("branches", "main", "full"):
            r = await client.call_tool("trace", {"name": "nn.LSTM", "detail": d, "max_chars": 100000})
            sizes[d] = max(len(text(r)), len(json.dumps(r.structured_content, separators=(",", ":"),
                                                          ensure_ascii=False)))
        rows = await client.call_tool("sql", {"query": "SELECT * FROM symbols ORDER BY id", "limit": 50,
                                              "max_chars": 2000})
        k = int(rows.structured_content["narrower"][0]["call"].removeprefix("limit="))
        fits = await client.call_tool("sql", {"query": "SELECT * FROM symbols ORDER BY id", "limit": k,
                                              "max_chars": 2000})
        more = await client.call_tool("sql", {"query": "SELECT * FROM symbols ORDER BY id", "limit": k + 1,
                                              "max_chars": 2000})
        return full, sizes, rows, k, fits, more
    full, sizes, rows, k, fits, more = session(sample_db, scenario)
    assert full.is_error and full.structured_content["error"] == "too_large"
    assert full.structured_content["chars"] == sizes["full"] > 4000
    assert full.structured_content["narrower"] == [{"call": "detail='branches'", "chars": sizes["branches"]},
                                                   {"call": "detail='main'", "chars": sizes["main"]}]
    assert sizes["main"] < sizes["branches"] <= 4000 < sizes["full"]
    assert text(full).startswith(f"refused: the 'full' trace of nn.LSTM is {sizes['full']:,} characters, over "
                                 f"max_chars=4,000; nothing was cut.\nNarrower calls that fit: detail='branches'")
    assert f"The whole answer: max_chars={sizes['full']}." in text(full)
    # a page of rows: the largest limit whose page fits is named, and it does fit; one row more does not
    assert rows.is_error and 0 < k < 50
    assert not fits.is_error and len(fits.structured_content["rows"]) == k
    assert more.is_error and more.structured_content["error"] == "too_large"


def test_unknown_names_and_bad_arguments_are_tool_errors_with_suggestions(sample_db):
    async def scenario(client):
        return [await client.call_tool(n, a) for n, a in (
            ("trace", {"name": "relux"}), ("op", {"name": "lstmm"}), ("stub", {"name": "add_stubb"}),
            ("find", {"name": "zzzq"}), ("trace", {"name": "relu", "depth": 9}),
            ("trace", {"name": "relu", "colour": "red"}), ("sql", {"query": "DELETE FROM meta"}), ("tracee", {}))]
    trace, op, stub, find, depth, unknown_arg, write, tool = session(sample_db, scenario)
    for r in (trace, op, stub, find, depth, unknown_arg, write, tool):
        assert r.is_error is True
    assert trace.structured_content["error"] == "unknown_name"
    assert trace.structured_content["suggestions"] == ["relu", "relu_"]
    assert text(trace).endswith("did you mean one of these?\n  relu, relu_\n")
    assert op.structured_content == {"error": "not_found", "suggestions": ["lstm"],
                                     "message": "no native_functions.yaml entry named 'lstmm'"}
    assert stub.structured_content["suggestions"][0] == "add_stub"
    assert "suggestions" not in find.structured_content and "'*zzzq*'" in text(find)
    assert text(depth) == "trace: depth must be from 0 to 5, got 9\n"
    assert text(unknown_arg).startswith("trace: unknown argument colour; it takes name, detail, device")
    assert write.structured_content["error"] == "usageerror" and "read-only" in text(write)
    assert tool.structured_content["error"] == "unknown_tool" and tool.structured_content["suggestions"] == ["trace"]


def test_resources_hold_the_schema_and_the_build_facts(sample_db):
    async def scenario(client):
        listed = (await client.list_resources()).resources
        return listed, await client.read_resource("opindex://schema"), await client.read_resource("opindex://build")
    listed, schema, build = session(sample_db, scenario)
    assert [str(r.uri) for r in listed] == ["opindex://schema", "opindex://build"]
    from opindex.schema.doc import markdown
    assert schema.contents[0].text == markdown()
    facts = json.loads(build.contents[0].text)
    assert (facts["index"], facts["chosen_by"]) == (str(sample_db), "--db")
    assert facts["meta"]["checkout_root"] == str(REPO / "sample_checkout")
    assert facts["rows"]["native_functions"] == 26


def test_stdout_carries_protocol_messages_only(sample_db):
    """Raw JSON-RPC over the pipe: every line the server writes to stdout is a protocol message; what it says
    about itself goes to stderr."""
    messages = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "test", "version": "0"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "trace",
                                                                             "arguments": {"name": "relu"}}},
                {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "profile",
                                                                             "arguments": {"path": "/nonexistent"}}}]
    server = subprocess.Popen([sys.executable, "-m", "opindex", "mcp", "--db", str(sample_db)], cwd=REPO,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        server.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        server.stdin.flush()
        lines = [server.stdout.readline() for _ in range(3)]  # a reply to each request, then the client leaves
        server.stdin.close()
        rest, stderr = server.stdout.read(), server.stderr.read()
        assert server.wait(timeout=60) == 0, stderr
    finally:
        server.kill()
    assert rest == ""
    run = subprocess.CompletedProcess(server.args, 0, "".join(lines), stderr)
    replies = [json.loads(line) for line in run.stdout.splitlines()]
    assert [r["id"] for r in replies] == [1, 2, 3] and all(r["jsonrpc"] == "2.0" for r in replies)
    assert replies[1]["result"]["isError"] is False
    assert replies[2]["result"]["isError"] is True
    assert "/nonexistent: cannot read the profile" in replies[2]["result"]["content"][0]["text"]
    assert run.stderr.startswith(f"opindex mcp: opindex serves the index {sample_db} (--db)")


def test_no_index_is_said_before_the_protocol_starts(tmp_path):
    run = subprocess.run([sys.executable, "-m", "opindex", "mcp", "--db", str(tmp_path / "none.sqlite")], cwd=REPO,
                         input="", capture_output=True, text=True, timeout=60)
    assert run.returncode == 3 and run.stdout == ""
    assert "none.sqlite" in run.stderr
