"""`python -m laya_cases_cli` is the same as the `laya-cases` console script."""
from laya_cases_cli.app import main

main()
