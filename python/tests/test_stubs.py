"""The type stubs (.pyi) ship with the package and name what the module defines."""

import ast
import pathlib

import gemm
from gemm import _gemm

PACKAGE = pathlib.Path(gemm.__file__).parent


def stub_names(name):
    tree = ast.parse((PACKAGE / name).read_text())
    return {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}


def test_stubs_and_marker_are_installed():
    assert (PACKAGE / "py.typed").exists()
    assert (PACKAGE / "_gemm.pyi").exists() and (PACKAGE / "__init__.pyi").exists()


def test_module_stub_names_every_function_and_class():
    defined = {name for name in dir(_gemm) if not name.startswith("__")}
    assert defined == stub_names("_gemm.pyi")


def test_package_stub_names_the_package_functions():
    own = {name for name in gemm.__all__ if getattr(gemm, name).__module__ == "gemm"}
    assert own <= stub_names("__init__.pyi")
