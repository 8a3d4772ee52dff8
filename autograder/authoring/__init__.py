"""Tools course staff run on lessons: the release, the 评分表, the demo class, written agreement."""
