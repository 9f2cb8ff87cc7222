"""``jetlink context add|ls|select|show|rm``: named defaults for the global options.

A context (like ``nats context``) names a data directory and a cluster; the selected one
applies to every command whose --data-dir / --cluster come neither from the command line nor
from the environment (the precedence is in cli/root.py ``_apply_context``). The files are
``jetlink.core.contexts.ContextStore``'s: TOML in the XDG config directory, mode 0600; this
module parses, calls it and renders. The root callback does not apply a context to these
verbs, so they work even when the context in force is broken or names a missing directory.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from jetlink.cli import completion, output
from jetlink.cli.app import ENV_CLUSTER, ENV_CONTEXT, ENV_DATA_DIR, App
from jetlink.cli.common import usage
from jetlink.cli.options import ENV_REST_URL, TIMEOUT, JsonOption, force_option
from jetlink.core.live.settings import ENV, JETLINK_KEYS

if TYPE_CHECKING:  # pragma: no cover
    from jetlink.core.contexts import Context, ContextStore

context_app = typer.Typer(
    name="context",
    help="Manage contexts (like nats context).\n\nA context names a data directory and a "
    "cluster. The selected context applies when neither the command line (--data-dir, "
    "--cluster) nor the environment (JETLINK_DATA_DIR, JETLINK_CLUSTER) gives them; "
    "JETLINK_CONTEXT or the global option --context NAME puts another context in force. "
    "Contexts are TOML files in $XDG_CONFIG_HOME/jetlink/context/ (mode 0600).",
    no_args_is_help=True,
)

# environment variable -> the context key it overrides: jetlink's, then natscli's (nearer
# than a context's server settings, docs/live.md: core/live/settings.py ENV, by the
# ServerTarget field each context key gives, JETLINK_KEYS)
OVERRIDES = ((ENV_DATA_DIR, "data_dir"), (ENV_CLUSTER, "cluster"), (ENV_REST_URL, "rest_url"),
             *((ENV[target], key) for key, target in JETLINK_KEYS.items() if target in ENV),
             # natscli's NATS_CONTEXT names the natscli context used instead of the one the
             # context names (core/live/settings.py resolve_target: the nearer layer)
             ("NATS_CONTEXT", "nats_context"))

NameArg = Annotated[str, typer.Argument(metavar="NAME", help="Context name ([A-Za-z0-9_-]).")]
# an existing context's name (select, rm, show...): offered by the shell's completion
ExistingArg = Annotated[str, typer.Argument(metavar="NAME", help="Context name ([A-Za-z0-9_-]).",
                                            autocompletion=completion.contexts)]


def _store() -> ContextStore:
    from jetlink.core.contexts import ContextStore

    return ContextStore()


def _selected(store: ContextStore) -> str | None:
    """The selected context's name; a broken context.txt is a warning and no selection."""
    from jetlink.core.errors import JetlinkError

    try:
        return store.selected()
    except JetlinkError as err:
        output.notice(None, f"jetlink: warning: {err.description}")
        return None


def context_doc(store: ContextStore, context: Context, selected: str | None) -> dict[str, Any]:
    """The JSON document of a context: its values, whether it is selected and its file."""
    return {
        **context.to_dict(),
        "selected": context.name == selected,
        "path": str(store.path(context.name)),
    }


def _env(name: str) -> str:
    # As click reads an option's envvar: an empty value is no value.
    return os.environ.get(name, "")


def overridden_by(name: str, in_force: str | None, context: Context | None = None
                  ) -> dict[str, str]:
    """The environment variables that currently override the context ``name``: name ->
    value (with ``context``, only those of the values it sets). JETLINK_CONTEXT is listed
    when it puts another context in force."""
    from jetlink.core.contexts import MASK
    from jetlink.core.live.target import shown_url

    found = {var: MASK if key == "password" else shown_url(_env(var)) if key == "server"
             else _env(var) for var, key in OVERRIDES
             if _env(var) and (context is None or getattr(context, key, None))}
    env_context = _env(ENV_CONTEXT)
    if env_context and env_context != name and in_force != name:
        found[ENV_CONTEXT] = env_context
    return found


def _server_opt(flag: str, metavar: str, text: str, **kw: Any) -> Any:
    return typer.Option(flag, metavar=metavar, help=text, show_default=False,
                        rich_help_panel="Live server", **kw)


# what each live-server option of `context add` takes: an empty value is none of them
_NOT_EMPTY = {
    "--server": "give server URLs, e.g. nats://127.0.0.1:4222",
    "--user": "give a user name or a token",
    "--password": "give the password",
    "--creds": "give a credentials file",
    "--nkey": "give an NKEY seed file",
    "--tlscert": "give a certificate file",
    "--tlskey": "give a private key file",
    "--tlsca": "give a certificate authority file",
    "--js-domain": "a domain is one subject token",
    "--inbox-prefix": "a prefix is a subject",
    "--nats-context": "give a natscli context name",
}


def _abs(path: str | None) -> str | None:
    """A file named in a context: stored absolute (the context is used from anywhere)."""
    return os.path.abspath(os.path.expanduser(path)) if path else None


def target_doc(ctx: typer.Context, shown: Context | None = None) -> dict[str, Any]:
    """Which target the invocation's settings put in force (cli/common.py
    ``target_in_force``, as for every other verb), and why: {"kind": "live", ...} or {"kind":
    "embedded", "data_dir"}; a setting that can not be used: {"kind": "error", "error"}.
    ``shown``: the target of that context instead (``context show NAME`` of a context not
    in force: what ``--context NAME`` would give)."""
    from jetlink.cli.common import target_in_force, target_of
    from jetlink.core.errors import JetlinkError
    from jetlink.core.live.settings import selected_nats_context

    app = App.of(ctx)
    try:
        target = (target_in_force(ctx) if shown is None
                  else target_of(ctx.find_root().params, shown))
    except JetlinkError as err:
        return {"kind": "error", "error": err.description}
    if target is not None:
        doc: dict[str, Any] = {"kind": "live", **target.to_dict()}
    else:
        from jetlink.cli.common import context_in_force, given

        data = app.data_dir  # the context verbs skip _apply_context: apply it here
        if not given(ctx.find_root(), "data_dir"):
            found = context_in_force(ctx) if shown is None else shown
            if found is not None and found.data_dir:
                data = Path(found.data_dir).expanduser()
        doc = {"kind": "embedded", "data_dir": str(data)}
        aside = _server_set_aside(ctx, shown)
        if aside:
            doc["server_set_aside"] = aside
    selected = selected_nats_context()
    if selected and not (target is not None and selected in target.origin):
        doc["natscli_selected_unused"] = selected
    return doc


def _server_set_aside(ctx: typer.Context, shown: Context | None) -> str | None:
    """Why the context in force's server is not the target (``--data-dir`` or
    ``JETLINK_DATA_DIR``, ``--cluster`` or its variable, addressing the embedded engine:
    cli/common.py ``_selected_set_aside``'s rule), None when it has none or is used."""
    from jetlink.cli.common import addressing, context_in_force, named_context
    from jetlink.cli.common import parameter_source as source

    root = ctx.find_root()
    if shown is not None or named_context(root)[0] is not None:
        return None  # (a context named, or shown by name: its server is used)
    found = context_in_force(ctx)
    if found is None or not (found.server or found.nats_context):
        return None
    addressed = [addressing(root, n) for n in ("data_dir", "cluster")
                 if source(root, n) in ("COMMANDLINE", "ENVIRONMENT")]
    if addressed:
        return (f"the selected context {found.name}'s server is not used: "
                f"{' and '.join(addressed)} address{'es' if len(addressed) == 1 else ''} "
                "the embedded engine")
    return None


def render_target(app: App, doc: dict[str, Any]) -> None:
    if doc["kind"] == "live":
        output.line(app, f"Target: live server {','.join(doc['servers'])} (from "
                         f"{doc['origin']})")
    elif doc["kind"] == "embedded":
        why = doc.get("server_set_aside") or ("no server named: --server, NATS_URL, a "
                                              "context's server or --nats-context")
        output.line(app, f"Target: embedded engine, data directory {doc['data_dir']} "
                         f"({why})")
    else:
        output.line(app, f"Target: none: {doc['error']}")
    if doc.get("natscli_selected_unused"):
        output.line(app, f"natscli's selected context {doc['natscli_selected_unused']} is "
                         "not used unless named (--nats-context)")


# -- commands -------------------------------------------------------------------------------


@context_app.command("add")
def add(
    ctx: typer.Context,
    name: NameArg,
    data_dir: Annotated[
        str | None,
        typer.Option(
            "--data-dir",
            metavar="DIR",
            help="Data directory of the context (stored as an absolute path).",
            show_default=False,
        ),
    ] = None,
    cluster: Annotated[
        str | None,
        typer.Option(
            "--cluster", metavar="NAME", help="Cluster of the context.", show_default=False
        ),
    ] = None,
    rest_url: Annotated[
        str | None,
        typer.Option(
            "--rest-url",
            metavar="URL",
            help="REST API v3 endpoint the links / mirrors verbs call in this context.",
            show_default=False,
        ),
    ] = None,
    description: Annotated[
        str, typer.Option("--description", metavar="TEXT", help="What the context is for.")
    ] = "",
    select: Annotated[
        bool, typer.Option("--select", help="Select the new context too.")
    ] = False,
    server: Annotated[str | None, _server_opt("--server", "URL[,URL...]",
                                               "NATS server URLs: a live server.")] = None,
    user: Annotated[str | None, _server_opt("--user", "USER", "Username or token.")] = None,
    password: Annotated[str | None, _server_opt("--password", "PASSWORD", "Password.")] = None,
    creds: Annotated[str | None, _server_opt("--creds", "FILE", "User credentials file.")
                     ] = None,
    nkey: Annotated[str | None, _server_opt("--nkey", "FILE", "User NKEY seed file.")] = None,
    tlscert: Annotated[str | None, _server_opt("--tlscert", "FILE",
                                                "TLS client certificate file.")] = None,
    tlskey: Annotated[str | None, _server_opt("--tlskey", "FILE",
                                               "TLS client private key file.")] = None,
    tlsca: Annotated[str | None, _server_opt("--tlsca", "FILE",
                                              "TLS certificate authority chain file.")] = None,
    tlsfirst: Annotated[bool, typer.Option("--tlsfirst", rich_help_panel="Live server",
                                           help="Perform the TLS handshake first.")] = False,
    js_domain: Annotated[str | None, _server_opt("--js-domain", "DOMAIN", "JetStream domain.")
                         ] = None,
    inbox_prefix: Annotated[str | None, _server_opt("--inbox-prefix", "PREFIX",
                                                     "Custom inbox prefix.")] = None,
    timeout: Annotated[str | None, _server_opt("--timeout", "DURATION",
                                                "Time to wait on responses (e.g. 5s).",
                                                parser=TIMEOUT)] = None,
    nats_context: Annotated[str | None, _server_opt(
        "--nats-context", "NAME", "natscli context to take the other server settings from.")
    ] = None,
    update: Annotated[bool, typer.Option(
        "--update", help="Change the settings given of an existing context, keeping its "
        "other settings and its selection.")] = False,
    unset: Annotated[list[str] | None, typer.Option(
        "--unset", metavar="KEY", show_default=False,
        help="With --update: remove this setting (data_dir, server, password, ...; "
        "repeatable).")] = None,
    json_output: JsonOption = False,
) -> None:
    """Add a context, or change one (--update).

    Writes <config>/context/NAME.toml (mode 0600); a context of that name must not exist.
    The live-server settings (--server ... --nats-context, natscli's names) make the verbs
    run on that server when this context is in force (docs/live.md, "Working with a live NATS
    server"). With --json: the context (name, description, data_dir, cluster, rest_url,
    nats (its server settings, the password masked) when set, selected, path).
    """
    from jetlink.core.contexts import Context, validate_cluster, validate_context_name
    from jetlink.core.errors import JetlinkError

    app = App.of(ctx)
    store = _store()
    validate_context_name(name)  # (a usage error, as every bad value of a command line)
    if cluster is not None:
        try:
            validate_cluster(cluster)
        except JetlinkError as err:  # (a context file's is its own error: not a usage one)
            raise usage(err.description) from None
    directory = None
    if data_dir is not None:
        from jetlink.cli.options import dir_path

        directory = os.path.abspath(str(dir_path(data_dir, "--data-dir")))
    if rest_url is not None:
        from jetlink.cli.common import rest_api_root

        rest_api_root(rest_url)  # a usage error when it is not an http(s) URL
    for flag, value in (("--server", server), ("--user", user), ("--password", password),
                        ("--creds", creds), ("--nkey", nkey), ("--tlscert", tlscert),
                        ("--tlskey", tlskey), ("--tlsca", tlsca), ("--js-domain", js_domain),
                        ("--inbox-prefix", inbox_prefix), ("--nats-context", nats_context)):
        if value == "":
            raise usage(f"invalid value for {flag}: '' is empty ({_NOT_EMPTY[flag]}; to "
                        f"remove the setting: --update --unset {flag[2:].replace('-', '_')})")
    values = dict(
        description=description, data_dir=directory, cluster=cluster,
        rest_url=rest_url or None, server=server, user=user, password=password,
        creds=_abs(creds), nkey=_abs(nkey), tlscert=_abs(tlscert), tlskey=_abs(tlskey),
        tlsca=_abs(tlsca), tlsfirst=tlsfirst, js_domain=js_domain, inbox_prefix=inbox_prefix,
        timeout=timeout, nats_context=nats_context,
    )
    if unset and not update:
        raise usage("--unset KEY changes an existing context: give --update")
    if update:
        context = _updated(ctx, store.load(name), values, unset or [])
        context.check_connection()
        store.save(context)
    else:
        context = Context(name=name, **values)  # type: ignore[arg-type]
        context.check_connection()
        store.add(context)
    if select:
        store.select(name)
    if nats_context is not None:
        from jetlink.core.live.settings import nats_context_path

        file = nats_context_path(nats_context)
        where = file.parent
        if not file.is_file():
            output.notice(app, f"jetlink: warning: natscli context {nats_context} is not in "
                               f"{where} (yet): commands using context {name} fail until it "
                               "is")
        else:  # there, but a file natscli would not read either: said now, not at 3 a.m.
            from jetlink.core.errors import JetlinkError
            from jetlink.core.live.settings import read_nats_context

            try:
                read_nats_context(nats_context)
            except JetlinkError as err:
                output.notice(app, f"jetlink: warning: {err}: commands using context {name} "
                                   "fail until it is mended")
    doc = context_doc(store, context, _selected(store))
    verb = ("updated" if update else "created") + (" and selected" if select else "")
    app.emit(doc, human=lambda a, d: output.line(a, f"Context {name} was {verb}"))


def _updated(ctx: typer.Context, current: Any, values: dict[str, Any], unset: list[str]
             ) -> Any:
    """``current`` with the settings the command line gave (their parameter given, not its
    default) and without those ``--unset`` names; checked as a new one is."""
    import dataclasses

    from jetlink.cli.common import given
    from jetlink.core.contexts import CONTEXT_KEYS

    changes = {k: v for k, v in values.items() if given(ctx, k)}
    for key in unset:
        if key not in CONTEXT_KEYS:
            raise usage(f"--unset {key!r}: not a context setting (one of "
                        f"{', '.join(CONTEXT_KEYS)})")
        if key in changes:
            raise usage(f"--unset {key}: it is also given a value on this command line")
        changes[key] = "" if key == "description" else False if key == "tlsfirst" else None
    if not changes:
        raise usage("--update: give the settings to change (or --unset KEY)")
    return dataclasses.replace(current, **changes)


@context_app.command("ls")
def ls(
    ctx: typer.Context,
    names: Annotated[
        bool, typer.Option("--names", "-n", help="Print only the context names.")
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """List the contexts.

    The selected one is marked with *. A context file that cannot be read is reported on
    stderr and left out. With --json: a list of contexts (name, description, data_dir,
    cluster, rest_url, selected, path).
    """
    from jetlink.core.errors import JetlinkError

    app = App.of(ctx)
    store = _store()
    selected = _selected(store)
    docs = []
    for context_name in store.names():
        try:
            context = store.load(context_name)
        except JetlinkError as err:
            output.notice(app, f"jetlink: warning: {err.description}")
            continue
        docs.append(context_doc(store, context, selected))
    if selected and selected not in store.names():
        output.notice(app, f"jetlink: warning: the selected context {selected!r} does not "
                           f"exist (selected in {store.selected_path}): a command that names "
                           "no target of its own is refused until jetlink context select "
                           "NAME")
    if names and not app.json:
        output.lines(app, (doc["name"] for doc in docs))
        return
    app.emit(docs, human=render_contexts)


def render_contexts(app: App, docs: list[dict[str, Any]]) -> None:
    if not docs:
        output.line(app, "No contexts defined")
        return
    def server(d: dict[str, Any]) -> str:
        """Where a live-server context points: its server (the password masked) or the
        natscli context it takes the settings from."""
        nats = d.get("nats") or {}
        if nats.get("server"):
            return str(nats["server"])
        return f"natscli context {nats['nats_context']}" if nats.get("nats_context") else ""

    rows = [
        [
            d["name"],
            "*" if d["selected"] else "",
            d["data_dir"] or "",
            d["cluster"] or "",
            server(d),
            d["description"],
        ]
        for d in docs
    ]
    output.table(
        app,
        ("Name", "Selected", "Data Dir", "Cluster", "Server", "Description"),
        rows,
        title="Contexts",
        no_wrap=("Name", "Selected"),
    )


@context_app.command("select")
def select(ctx: typer.Context, name: ExistingArg, json_output: JsonOption = False) -> None:
    """Select the context in force by default.

    Writes its name to <config>/context.txt. JETLINK_CONTEXT and the global option
    --context still override it. With --json: the context (as context show).
    """
    app = App.of(ctx)
    store = _store()
    context = store.select(name)
    env_context = _env(ENV_CONTEXT)
    if env_context and env_context != name and not app.json:
        output.notice(app, f"{ENV_CONTEXT}={env_context} overrides the selected context")
    app.emit(_show_doc(ctx, store, context),
             human=lambda a, d: output.line(a, f"Context {name} is selected"))


@context_app.command("show")
def show(
    ctx: typer.Context,
    name: Annotated[
        str | None,
        typer.Argument(
            metavar="[NAME]",
            help="Context name (default: the one in force: --context, JETLINK_CONTEXT or "
            "the selected one).",
            show_default=False, autocompletion=completion.contexts,
        ),
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """Show a context and what overrides it.

    Lists each environment variable that currently overrides the context (JETLINK_DATA_DIR,
    JETLINK_CLUSTER, JETLINK_REST_URL; JETLINK_CONTEXT when it puts another context in
    force). With --json:
    name, description, data_dir, cluster, rest_url, selected, path and overridden_by (an
    object: variable -> value).
    """
    from jetlink.cli.common import context_in_force, named_context

    app = App.of(ctx)
    store = _store()
    named, _source = named_context(ctx)
    if name is not None:
        context = store.load(name)
    else:
        from jetlink.core.errors import JetlinkError

        try:
            found = context_in_force(ctx)
        except JetlinkError as err:
            if named is not None:  # --context / JETLINK_CONTEXT naming one not there
                raise
            # a selection naming a context not there (or a damaged context.txt): shown as
            # what is in force, which is no context, the way context ls says it
            output.notice(app, f"jetlink: warning: {err.description}")
            found = None
        if found is None:
            doc = {"name": None, "target": target_doc(ctx)}
            app.emit(doc, human=lambda a, d: (
                output.line(a, "No context is in force (jetlink context select NAME)"),
                render_target(a, d["target"])))
            return
        context = found
    app.emit(_show_doc(ctx, store, context), human=render_context)


def _show_doc(ctx: typer.Context, store: Any, context: Any) -> dict[str, Any]:
    """context show's document of ``context``: its settings, what overrides it, and where
    the commands go (``target``)."""
    from jetlink.cli.common import named_context

    named, _source = named_context(ctx)
    selected = _selected(store)
    in_force = named if named is not None else selected
    return {
        **context_doc(store, context, selected),
        "overridden_by": overridden_by(context.name, in_force, context),
        "target": target_doc(ctx, None if context.name == in_force else context),
    }


@context_app.command("info")
def info(
    ctx: typer.Context,
    name: Annotated[
        str | None,
        typer.Argument(metavar="[NAME]", help="Context name (default: the one in force).",
                       show_default=False, autocompletion=completion.contexts),
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """Show a context (as context show).

    natscli's name for context show: the same output and --json document.
    """
    show(ctx, name, json_output)


def render_context(app: App, doc: dict[str, Any]) -> None:
    rows: dict[str, Any] = {
        "Description": doc["description"] or None,
        "Data Dir": doc["data_dir"],
        "Cluster": doc["cluster"],
    }
    if doc.get("rest_url"):
        rows["REST URL"] = doc["rest_url"]
    for key, value in (doc.get("nats") or {}).items():
        rows[f"NATS {key}"] = value
    rows["Selected"] = doc["selected"]
    rows["Path"] = doc["path"]
    output.kv_block(app, rows, title=f"Context {doc['name']}")
    if "target" in doc:
        render_target(app, doc["target"])
    keys = dict(OVERRIDES)
    for var, value in doc["overridden_by"].items():
        if var in keys:
            output.line(app, f"{var}={value} overrides {keys[var]}")
        else:
            output.line(app, f"{var}={value} puts context {value} in force instead")


@context_app.command("rm")
def rm(
    ctx: typer.Context,
    name: ExistingArg,
    force: Annotated[bool, force_option("Remove")] = False,
    json_output: JsonOption = False,
) -> None:
    """Remove a context.

    Deletes <config>/context/NAME.toml; removing the selected context leaves none selected.
    Asks for confirmation on a terminal; without one, -f/--force is required. The selected
    context is removed only with -f/--force (natscli's rule), which unselects it.
    """
    from jetlink.core.errors import JetlinkError

    app = App.of(ctx)
    store = _store()
    if not store.exists(name):  # validates the name too
        store.load(name)  # a directory in its place is named as such
        raise store.unknown(name)
    selected = store.selected_or_none() == name
    if selected and not force:  # natscli's context rm
        raise JetlinkError("cannot remove the selected context, select another one or use "
                           "the unselect command (or pass -f/--force)")
    output.confirm(
        app, f"Really remove context {name}", force=force, action=f"remove context {name}"
    )
    store.remove(name)
    output.success(app, f"Context {name} was removed" + (
        "; no context is selected now" if selected else ""))


@context_app.command("previous")
def previous(ctx: typer.Context, json_output: JsonOption = False) -> None:
    """Select the context selected before.

    natscli's context previous: the context selected before the current selection (or
    before context unselect) is selected again, the current one kept as the previous, so
    two runs go back and forth; then it shows the context as context show does. With none
    recorded, it shows what is in force.
    """
    store = _store()
    name = store.previous()
    if name is not None:
        store.select(name)  # (one removed since: unknown context, exit 1)
    show(ctx, name, json_output=json_output)


@context_app.command("-", hidden=True)
def previous_alias(ctx: typer.Context, json_output: JsonOption = False) -> None:
    """Select the previous context again.

    natscli's ``context -``: the alias of context previous.
    """
    previous(ctx, json_output)


@context_app.command("unselect")
def unselect(ctx: typer.Context, json_output: JsonOption = False) -> None:
    """Select no context.

    natscli's context unselect: removes <config>/context.txt, so the defaults (or
    JETLINK_CONTEXT, --context) are in force. With --json: {"unselected": NAME or null}.
    """
    app = App.of(ctx)
    store = _store()
    current = store.selected_or_none()  # (an unreadable selection is removed all the same)
    store.unselect()
    app.emit({"unselected": current}, human=lambda a, d: output.line(
        a, f'Unselected the "{current}" context' if current else
        "No context currently selected"))


def register(app: typer.Typer) -> None:
    app.add_typer(context_app, name="context")
