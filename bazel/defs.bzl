"""Bazel rules cooking a ludus-anim project one asset per action.

- `ludus_anim_cook`: one asset, as `ludus-anim cook-asset` (reads only the
  declared inputs, writes only `<name>/asset.ludanim`,
  `asset.manifest.json`, `asset.report.json` and, with the sidecar on,
  `asset.sidecar.part`). Each action is cached and can run remotely on
  its own.
- `ludus_anim_merge`: `ludus-anim merge` over the assets' fragments into a
  directory holding what `ludus-anim cook` writes: `packages/`,
  `manifest.json`, `report.json`, `report-sidecar.json`.
- `ludus_anim_project`: both, from the asset list that the
  `ludus_anim_repository` rule (repositories.bzl) generates with
  `ludus-anim query`.

The `ludus-anim` binary is a tool input of every action (a prebuilt file;
see repositories.bzl), so remote workers receive it with the inputs.
See docs/bazel.md.
"""

LudusAnimFragmentInfo = provider(
    doc = "One asset's cook-asset outputs.",
    fields = {
        "dir": "the output directory path (holds the fixed-name files)",
        "files": "the output files",
    },
)

_FIXED = ["asset.ludanim", "asset.manifest.json", "asset.report.json"]
_SIDECAR = "asset.sidecar.part"

def _cook_impl(ctx):
    names = _FIXED + ([_SIDECAR] if ctx.attr.sidecar else [])
    outs = [ctx.actions.declare_file(ctx.label.name + "/" + n) for n in names]
    out_dir = outs[0].dirname
    args = ctx.actions.args()
    args.add("--quiet")
    args.add("cook-asset")
    args.add(ctx.file.source.path)
    args.add("--manifest", ctx.file.manifest.path)
    args.add("--out", out_dir)
    if not ctx.attr.sidecar:
        args.add("--no-sidecar")
    args.add_all(ctx.files.srcs, before_each = "--input")
    args.add_all(ctx.attr.extra_args)
    ctx.actions.run(
        executable = ctx.executable.tool,
        arguments = [args],
        inputs = depset([ctx.file.source, ctx.file.manifest] + ctx.files.srcs),
        outputs = outs,
        mnemonic = "LudusAnimCook",
        progress_message = "Cooking %s" % ctx.file.source.short_path,
    )
    return [
        DefaultInfo(files = depset(outs)),
        LudusAnimFragmentInfo(dir = out_dir, files = outs),
    ]

ludus_anim_cook = rule(
    implementation = _cook_impl,
    doc = "Cooks one asset hermetically (`ludus-anim cook-asset`).",
    attrs = {
        "source": attr.label(allow_single_file = True, mandatory = True),
        "manifest": attr.label(allow_single_file = True, mandatory = True),
        "srcs": attr.label_list(
            allow_files = True,
            doc = "Every other file the asset's cook reads (`ludus-anim query`'s all_inputs).",
        ),
        "sidecar": attr.bool(default = True),
        "extra_args": attr.string_list(
            doc = "More cook-asset flags that change no input (--codec, --units, --limit): " +
                  "settings that do (profiles, retarget) belong in the manifest, which query reads.",
        ),
        "tool": attr.label(
            executable = True,
            cfg = "exec",
            allow_single_file = True,
            mandatory = True,
        ),
    },
)

def _merge_impl(ctx):
    out = ctx.actions.declare_directory(ctx.label.name)
    infos = [f[LudusAnimFragmentInfo] for f in ctx.attr.fragments]
    files = [f for i in infos for f in i.files]
    args = [ctx.executable.tool.path, out.path, ctx.file.order.path]
    args += [i.dir for i in infos]

    # merge publishes through the output directory's lock and staging
    # area (.lock, .generation, .tmp); they are not outputs.
    ctx.actions.run_shell(
        command = "\"$1\" --quiet merge --order \"$3\" --out \"$2\" \"${@:4}\" && rm -rf \"$2/.tmp\" \"$2/.lock\" \"$2/.generation\"",
        arguments = args,
        inputs = depset(files + [ctx.file.order]),
        tools = [ctx.executable.tool],
        outputs = [out],
        mnemonic = "LudusAnimMerge",
        progress_message = "Merging %d cooked assets" % len(infos),
    )
    return [DefaultInfo(files = depset([out]))]

ludus_anim_merge = rule(
    implementation = _merge_impl,
    doc = "Merges ludus_anim_cook fragments into a cook's output directory.",
    attrs = {
        "fragments": attr.label_list(providers = [LudusAnimFragmentInfo]),
        "order": attr.label(
            allow_single_file = True,
            mandatory = True,
            doc = "`ludus-anim query` JSON: the job order, and every asset must be there.",
        ),
        "tool": attr.label(
            executable = True,
            cfg = "exec",
            allow_single_file = True,
            mandatory = True,
        ),
    },
)

def ludus_anim_project(name, project, extra_args = [], **kwargs):
    """One ludus_anim_cook per asset and a ludus_anim_merge named `name`.

    Args:
      name: the merge target; its output directory is `<name>/`.
      project: `LUDUS_ANIM_PROJECT` from the assets.bzl that
        ludus_anim_repository generates: `assets` (name, source, inputs,
        sidecar each), the `manifest`, the `tool` and the `query` JSON.
      extra_args: flags for every cook-asset action (see ludus_anim_cook).
      **kwargs: common attributes (visibility, tags) of the merge target.
    """
    fragments = []
    for a in project["assets"]:
        ludus_anim_cook(
            name = a["name"],
            source = a["source"],
            manifest = project["manifest"],
            srcs = a["inputs"],
            sidecar = a["sidecar"],
            extra_args = extra_args,
            tool = project["tool"],
            visibility = kwargs.get("visibility"),
        )
        fragments.append(":" + a["name"])
    ludus_anim_merge(
        name = name,
        fragments = fragments,
        order = project["query"],
        tool = project["tool"],
        **kwargs
    )
