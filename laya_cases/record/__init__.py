"""The one writer of decision rows: a run being recorded (recorder.py) and recorded answers ingested (ingest/).
"""
