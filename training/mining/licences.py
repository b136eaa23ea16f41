"""A package's licence, read from the metadata it ships, and whether it is permissive.

Sources: a Python sdist's ``PKG-INFO`` (``License-Expression``, the ``License ::`` classifiers, ``License``),
an npm ``package.json`` (``license`` / ``licenses``), a Debian ``copyright`` file (machine-readable or not).
Names are normalised to SPDX identifiers where one is known.
"""

from __future__ import annotations

import email.parser
import re

PERMISSIVE = {
    "MIT",
    "MIT-0",
    "X11",
    "BSD",
    "BSD-2-Clause",
    "BSD-3-Clause",
    "0BSD",
    "Apache-2.0",
    "ISC",
    "Unlicense",
    "Zlib",
    "PSF-2.0",
    "Python-2.0",
    "CC0-1.0",
    "BlueOak-1.0.0",
    "BSL-1.0",
    "public-domain",
}
# Copyleft licences whose linking exception lets the code be read and learned from as a library. Only for
# the JDK's own sources, which the project's brief names as the Java source (documented in training/README.md).
CLASSPATH_EXCEPTION = "GPL-2.0-only WITH Classpath-exception-2.0"
ACCEPTED_EXCEPTIONS = {CLASSPATH_EXCEPTION}

_ALIASES = [
    (r"^(the )?mit( license)?( \(mit\))?$|^expat$|^mit/expat$", "MIT"),
    (r"^mit-0$", "MIT-0"),
    (r"^x11$", "X11"),
    (r"^(new |modified |revised )?bsd[- ]?3[- ]?clause( license)?$|^bsd 3-clause$|^3-clause bsd( license)?$",
     "BSD-3-Clause"),
    (r"^(simplified |freebsd )?bsd[- ]?2[- ]?clause( license)?$|^2-clause bsd( license)?$", "BSD-2-Clause"),
    (r"^(the )?bsd( license)?$|^bsd-style$|^new bsd( license)?$|^modified bsd( license)?$", "BSD"),
    (r"^0bsd$", "0BSD"),
    (r"^apache( software)?( license)?[ ,-]*(version )?(v)?2(\.0)?( license)?$|^apache software license$|^apache$"
     r"|^apache license,? version 2\.0$|^apache-2$", "Apache-2.0"),
    (r"^isc( license)?( \(iscl\))?$|^iscl$", "ISC"),
    (r"^(the )?unlicense$", "Unlicense"),
    (r"^zlib( license)?$|^zlib/libpng$", "Zlib"),
    (r"^psf(-2\.0)?$|^python software foundation license$", "PSF-2.0"),
    (r"^cc0(-1\.0)?$", "CC0-1.0"),
    (r"^blueoak-1\.0\.0$", "BlueOak-1.0.0"),
    (r"^bsl-1\.0$|^boost software license.*$", "BSL-1.0"),
    (r"^public[ -]domain$", "public-domain"),
    (r"^gpl-2( with classpath exception| with classpath-exception)?.*classpath.*$", CLASSPATH_EXCEPTION),
]
_CLASSIFIERS = {
    "mit license": "MIT",
    "mit no attribution license (mit-0)": "MIT-0",
    "bsd license": "BSD",
    "apache software license": "Apache-2.0",
    "isc license (iscl)": "ISC",
    "the unlicense (unlicense)": "Unlicense",
    "python software foundation license": "PSF-2.0",
    "zlib/libpng license": "Zlib",
    "boost software license 1.0 (bsl-1.0)": "BSL-1.0",
}
_TEXTS = [
    ("Permission is hereby granted, free of charge", "MIT"),
    ("Redistribution and use in source and binary forms", "BSD"),
    ("Licensed under the Apache License, Version 2.0", "Apache-2.0"),
    ("Apache License\nVersion 2.0", "Apache-2.0"),
    ("Permission to use, copy, modify, and/or distribute this software for any", "ISC"),
]


def normalise(name: str) -> str:
    """One licence name as an SPDX identifier (the name unchanged when unknown)."""
    text = " ".join(name.strip().strip("()").split())
    text = re.sub(r"~\S*$", "", text)  # Debian's variant marks: BSD-3-clause~Google
    lowered = text.lower()
    for pattern, spdx in _ALIASES:
        if re.match(pattern, lowered):
            return spdx
    return text


def split_expression(expression: str) -> list[list[str]]:
    """An SPDX-like expression as alternatives (OR, /) of conjunctions (AND, ,), each name normalised."""
    text = expression.replace("(", " ").replace(")", " ")
    alternatives = re.split(r"\s+or\s+|\s*/\s*|\s*\|\|\s*", text, flags=re.I)
    return [[normalise(part) for part in re.split(r"\s+and\s+|\s*,\s*|\s*&\s*", alt, flags=re.I) if part.strip()]
            for alt in alternatives if alt.strip()]


def is_permissive(expression: str) -> bool:
    """Whether some alternative of the expression is made only of permissive licences."""
    if expression in ACCEPTED_EXCEPTIONS:
        return True
    return any(alt and all(name in PERMISSIVE for name in alt) for alt in split_expression(expression))


def canonical(expression: str) -> str:
    """The expression written with SPDX names (``MIT OR Apache-2.0``)."""
    if expression in ACCEPTED_EXCEPTIONS:
        return expression
    return " OR ".join(" AND ".join(alt) for alt in split_expression(expression))


def from_text(text: str) -> str:
    """A licence recognised from a licence file's text, or ''."""
    flat = " ".join(text.split())
    for marker, spdx in _TEXTS:
        if " ".join(marker.split()) in flat:
            return spdx
    return ""


def from_source_headers(texts: list[str]) -> str:
    """The licence stated in source files' header comments (the JDK's: GPL-2.0 with the Classpath exception)."""
    flat = [" ".join(text[:3000].split()) for text in texts]
    if flat and all("GNU General Public License version 2 only" in t and "Classpath" in t for t in flat):
        return CLASSPATH_EXCEPTION
    found = {from_text(t) for t in flat}
    return found.pop() if len(found) == 1 else ""


def from_pkg_info(text: str) -> str:
    """The licence a Python sdist's PKG-INFO declares: expression, then classifiers, then the License field."""
    message = email.parser.HeaderParser().parsestr(text)
    expression = (message.get("License-Expression") or "").strip()
    if expression:
        return canonical(expression)
    found = []
    for classifier in message.get_all("Classifier") or []:
        parts = [p.strip() for p in classifier.split("::")]
        if parts[0] == "License" and len(parts) > 1 and parts[-1] != "OSI Approved":
            spdx = _CLASSIFIERS.get(parts[-1].lower(), parts[-1])
            if spdx not in found:
                found.append(spdx)
    if found:
        return " OR ".join(found)
    field = (message.get("License") or "").strip()
    if field and "\n" not in field and len(field) < 80 and field.upper() != "UNKNOWN":
        return canonical(field)
    return from_text(field) if field else ""


def from_package_json(meta: dict) -> str:
    """The licence an npm package.json declares."""
    value = meta.get("license") or meta.get("licenses") or ""
    if isinstance(value, dict):
        value = value.get("type", "")
    if isinstance(value, list):
        value = " OR ".join(v.get("type", "") if isinstance(v, dict) else str(v) for v in value)
    return canonical(str(value)) if value else ""


def from_debian_copyright(text: str) -> str:
    """The licence of a Debian package's upstream files: the ``Files: *`` stanza of a DEP-5 copyright file.

    Falls back to the first ``License:`` line, then to recognising the text.
    """
    stanzas = re.split(r"\n\s*\n", text)
    for stanza in stanzas:
        if re.search(r"^Files:\s*\*\s*$", stanza, re.M):
            match = re.search(r"^License:\s*(.+)$", stanza, re.M)
            if match:
                return canonical(match.group(1).strip())
    if "classpath exception" in text.lower() and "GNU General Public License" in text:
        return CLASSPATH_EXCEPTION
    match = re.search(r"^License:\s*(.+)$", text, re.M)
    if match:
        return canonical(match.group(1).strip())
    return from_text(text)
