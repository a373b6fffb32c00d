"""Alembic migrations, run programmatically at start-up by :func:`app.db.engine.run_migrations`.

New revision: ``.venv/bin/python -c "from app.db.engine import alembic_config, make_engine;
from alembic import command; command.revision(alembic_config(make_engine('sqlite:///var/pgs.db')),
'message', autogenerate=True)"``.
"""
