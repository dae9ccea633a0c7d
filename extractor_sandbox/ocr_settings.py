"""OCR's settings, read by the service at start and passed to the child in its environment.

This module imports no OCR library (the service imports it; only the child reads images, in
formats/ocr.py). The variables:

| Variable | Default | Meaning |
|---|---|---|
| `LOOM_EXTRACTOR_OCR` | `on` | `off`: no image is read; the readers report what then needs OCR |
| `LOOM_EXTRACTOR_OCR_LANGUAGES` | `eng` | Tesseract's models, joined by `+`; the service refuses to start when one is missing |
| `LOOM_EXTRACTOR_OCR_MAX_IMAGES` | `30` | images a file reads with OCR (an image shown twice is read once) |
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from extractor_sandbox.settings import SettingsError

OCR_VARIABLE = "LOOM_EXTRACTOR_OCR"
LANGUAGES_VARIABLE = "LOOM_EXTRACTOR_OCR_LANGUAGES"
MAX_IMAGES_VARIABLE = "LOOM_EXTRACTOR_OCR_MAX_IMAGES"
TESSDATA_VARIABLE = "TESSDATA_PREFIX"
VARIABLES = (OCR_VARIABLE, LANGUAGES_VARIABLE, MAX_IMAGES_VARIABLE, TESSDATA_VARIABLE)

TESSDATA_DIRECTORIES = (
    "/usr/share/tesseract-ocr/5/tessdata",
    "/usr/share/tesseract-ocr/4.00/tessdata",
    "/usr/share/tessdata",
)
LIBTESSERACT = "libtesseract.so.5"
LIBLEPT = ("liblept.so.5", "libleptonica.so.6")


class OcrSettingsError(SettingsError):
    """An OCR setting is invalid, or names a model that is not installed; one line."""


@dataclass(frozen=True)
class OcrSettings:
    enabled: bool = True
    languages: str = "eng"
    max_images: int = 30


def load_ocr_settings(environ: Mapping[str, str]) -> OcrSettings:
    """The OCR settings from `environ`; raises OcrSettingsError naming the variable."""
    defaults = OcrSettings()
    raw = environ.get(OCR_VARIABLE, "").strip().lower()
    if raw in ("", "on", "1", "true", "yes"):
        enabled = True
    elif raw in ("off", "0", "false", "no"):
        enabled = False
    else:
        raise OcrSettingsError(f"{OCR_VARIABLE} must be on or off, not {raw!r}")
    languages = environ.get(LANGUAGES_VARIABLE, "").strip() or defaults.languages
    names = languages.split("+")
    if not all(name and all(c.isalnum() or c in "_-" for c in name) for name in names):
        raise OcrSettingsError(
            f"{LANGUAGES_VARIABLE} must be model names joined by +, not {languages!r}"
        )
    max_raw = environ.get(MAX_IMAGES_VARIABLE, "").strip()
    max_images = defaults.max_images
    if max_raw:
        try:
            max_images = int(max_raw)
        except ValueError:
            max_images = 0
        if max_images < 1:
            raise OcrSettingsError(
                f"{MAX_IMAGES_VARIABLE} must be a positive integer, not {max_raw!r}"
            )
    return OcrSettings(enabled, languages, max_images)


def tessdata_directory(environ: Mapping[str, str]) -> str | None:
    """Where Tesseract's models are: TESSDATA_PREFIX, else Debian's places."""
    given = environ.get(TESSDATA_VARIABLE, "").strip()
    candidates = [given, os.path.join(given, "tessdata")] if given else []
    for directory in (*candidates, *TESSDATA_DIRECTORIES):
        if directory and os.path.isfile(os.path.join(directory, "eng.traineddata")):
            return directory
        if directory and given and os.path.isdir(directory):
            return directory
    return None


def libraries_installed() -> bool:
    import ctypes.util

    return bool(ctypes.util.find_library("tesseract")) and any(
        ctypes.util.find_library(name.split(".so")[0][3:]) for name in LIBLEPT
    )


def check_ocr(environ: Mapping[str, str]) -> str | None:
    """The service's check at start: raises OcrSettingsError for a bad setting or a model that
    is missing; returns the one line to say when OCR is on but its libraries are not installed."""
    settings = load_ocr_settings(environ)
    if not settings.enabled:
        return None
    if not libraries_installed():
        return (
            "OCR is on but Tesseract's libraries are not installed: pictures are not read"
            f" (install tesseract-ocr, or set {OCR_VARIABLE}=off)"
        )
    directory = tessdata_directory(environ)
    missing = [
        name
        for name in settings.languages.split("+")
        if directory is None or not os.path.isfile(os.path.join(directory, f"{name}.traineddata"))
    ]
    if missing:
        raise OcrSettingsError(
            f"{LANGUAGES_VARIABLE} names {', '.join(missing)}, but no such model is installed"
            f" in {directory or 'any tessdata directory'}"
        )
    return None


def ocr_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The OCR variables a child is given from the service's environment (nothing else passes)."""
    return {name: environ[name] for name in VARIABLES if environ.get(name, "").strip()}
