"""What people look at: HTML files, the read-only web app, plots. Views read, never write.
"""
