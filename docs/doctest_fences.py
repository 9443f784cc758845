"""A griffe extension for the documentation build: the docstrings' doctest examples (``>>>``
lines and the output after them, up to a blank line) rendered as Python console code blocks
rather than as Markdown prose, where ``[5.5, 1.716]`` would read as a link."""
import griffe


def _fenced(text):
    out, in_example = [], False
    for line in text.split("\n"):
        starts = line.lstrip().startswith(">>>")
        if starts and not in_example:
            out.append("```pycon")
            in_example = True
        elif in_example and not line.strip():
            out.append("```")
            in_example = False
        out.append(line)
    if in_example:
        out.append("```")
    return "\n".join(out)


class DoctestFences(griffe.Extension):
    def on_instance(self, *, obj, **kwargs):
        if obj.docstring is not None and ">>>" in obj.docstring.value:
            obj.docstring.value = _fenced(obj.docstring.value)
