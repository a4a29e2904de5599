"""The words and pictures of a game, in one wing: what one viewer sees of it
(`presenter`), its sentences (`words`, `event_text`, `view_text`, `help`) and its board
(`board_svg`, `textboard`, `charts`). The game page and the emails both show a game
through these modules, so a sentence has one home, where a translation can find it.
"""
