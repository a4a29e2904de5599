#!/usr/bin/env python3
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main() -> None:
    if "DJANGO_SETTINGS_MODULE" not in os.environ:
        # Run by hand in a checkout: act on the site `python3 dev.py run` serves (its
        # settings, kept in var/), unless this environment says otherwise.
        import dev

        dev.adopt_run_settings(os.environ)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lowenherz_site.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
