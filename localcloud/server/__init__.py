"""The local server: moto's threaded server on loopback (:mod:`.app`), the guard in front
of it that refuses foreign hosts, foreign origins and unsigned calls (:mod:`.guard`), and
the live view beside the AWS APIs (:mod:`.view`).

May import: :mod:`localcloud.text`. What the view shows is given to it by the account
(:data:`localcloud.server.view.Reader`), and the sections a project adds
(:class:`localcloud.server.view.ViewPart`).
"""
