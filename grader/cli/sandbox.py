"""`grader sandbox ...`: build and maintain the docker sandbox image."""

from __future__ import annotations

import time
from pathlib import Path

import click

from grader.sandboxing import image
from grader.sandboxing.engine import grader_containers, remove_containers


def _echo(line: str) -> None:
    click.echo(f"  {line}", err=True)


@click.group()
def sandbox() -> None:
    """Build and maintain the docker sandbox image."""


@sandbox.command()
@click.option("--tag", default=image.DEFAULT_TAG, show_default=True)
@click.option("--base-image", help="Base image (e.g. one made by `sandbox base`).")
@click.option(
    "--wheelhouse",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Install from these wheels only; the build then runs with networking off.",
)
@click.option("--torch-index-url", help="Extra package index serving torch CPU wheels.")
@click.option("--torch-version", default=image.TORCH_VERSION, show_default=True)
@click.option("--quiet", is_flag=True, help="Show only the build's step lines.")
def build(
    tag: str,
    base_image: str | None,
    wheelhouse: Path | None,
    torch_index_url: str | None,
    torch_version: str,
    quiet: bool,
) -> None:
    """Build the sandbox image (online, or air-gapped with --base-image and --wheelhouse)."""
    mode = "air-gapped" if wheelhouse else "online"
    click.echo(f"building {tag} ({mode}, base {base_image or 'default'})", err=True)

    def progress(line: str) -> None:
        if not quiet or line.startswith(("Step ", "#")):
            _echo(line)

    start = time.monotonic()
    facts = image.build_image(
        tag,
        base_image=base_image,
        wheelhouse=wheelhouse,
        torch_index_url=torch_index_url,
        torch_version=torch_version,
        on_line=progress,
    )
    click.echo(f"built {tag} in {time.monotonic() - start:.0f}s", err=True)
    for key, value in facts.as_dict().items():
        click.echo(f"{key}: {value}")


@sandbox.command()
@click.option("--name", default=image.DEFAULT_BASE, show_default=True)
@click.option("--suite", default="bookworm", show_default=True)
@click.option("--mirror", help="Debian mirror for debootstrap (default: debootstrap's own).")
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=image.CACHE_DIR,
    show_default=True,
)
@click.option("--refresh", is_flag=True, help="Re-run debootstrap and re-import.")
def base(name: str, suite: str, mirror: str | None, cache_dir: Path, refresh: bool) -> None:
    """Make an offline base image: debootstrap minbase + python3, then `docker import`."""
    image_id = image.make_base_image(
        name, cache_dir=cache_dir, suite=suite, mirror=mirror, refresh=refresh, on_line=_echo
    )
    click.echo(f"{name}: {image_id}")


@sandbox.command()
@click.option(
    "--dest",
    type=click.Path(file_okay=False, path_type=Path),
    default=image.CACHE_DIR / "wheelhouse",
    show_default=True,
)
@click.option("--torch-version", default=image.TORCH_VERSION, show_default=True)
@click.option("--torch-index-url", help="Extra package index serving torch CPU wheels.")
@click.option("--refresh", is_flag=True, help="Download again even if complete.")
def wheelhouse(dest: Path, torch_version: str, torch_index_url: str | None, refresh: bool) -> None:
    """Download the image's wheels (torch, safetensors, numpy and their dependencies)."""
    wheels = image.download_wheelhouse(
        dest,
        torch_version=torch_version,
        torch_index_url=torch_index_url,
        refresh=refresh,
        on_line=_echo,
    )
    for wheel in wheels:
        click.echo(wheel.name)


@sandbox.command()
def clean() -> None:
    """Remove every leftover grader container (running or stopped)."""
    ids = grader_containers()
    remove_containers(ids)
    click.echo(f"removed {len(ids)} container(s)")
